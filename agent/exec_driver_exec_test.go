package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// A command exec'd into an exec-driver task shares the task's isolation:
// its PID namespace, its chroot (no host file, the task's /local), its
// user, its environment and its cgroup.
func TestExecDriver_ExecInsideTask(t *testing.T) {
	a, c := execAgent(t)
	hostOnly := filepath.Join(t.TempDir(), "host-only")
	must.NoError(t, os.WriteFile(hostOnly, nil, 0o644))
	register(t, c, execJob("exec-into", execTask("main", "echo inside > /local/marker; sleep 300", 64), 0))
	alloc := onlyAlloc(t, c, "exec-into", isRunning)

	script := `cat /local/marker; id -u; echo "ns_pids=$(ls /proc | grep -c '^[0-9]*$')"; ` +
		`if [ -e ` + hostOnly + ` ]; then echo host=present; else echo host=absent; fi; echo "dir=$NOMAD_TASK_DIR"; exit 4`
	out, _, code, err := wsExec(t, a.HTTPAddr(), alloc.ID, "main", false, "", "/bin/sh", "-c", script)
	must.NoError(t, err)
	must.Eq(t, 4, code, must.Sprint(out))
	for _, want := range []string{"inside\n", "65534\n", "host=absent\n", "dir=/local\n"} {
		must.StrContains(t, out, want)
	}
	// The task's sleep, its shell and the exec'd shell with its children:
	// a handful of processes, not the host's.
	line := out[strings.Index(out, "ns_pids=")+len("ns_pids="):]
	line = line[:strings.Index(line, "\n")]
	must.True(t, len(line) == 1, must.Sprintf("processes seen: %s", line))

	// It runs in the task's cgroup: the same as the task's first process.
	out, _, code, err = wsExec(t, a.HTTPAddr(), alloc.ID, "main", false, "", "/bin/sh", "-c",
		`if [ "$(cat /proc/self/cgroup)" = "$(cat /proc/1/cgroup)" ]; then echo same; else cat /proc/self/cgroup /proc/1/cgroup; fi`)
	must.NoError(t, err)
	must.Zero(t, code)
	must.Eq(t, "same\n", out)

	out, _, code, err = wsExec(t, a.HTTPAddr(), alloc.ID, "main", true, "", "/bin/sh", "-c", "test -t 0 && echo tty")
	must.NoError(t, err)
	must.Eq(t, 0, code)
	must.Eq(t, "tty\r\n", out)
}
