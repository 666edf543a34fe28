package command

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
)

func TestAllocLogsJobAndTail(t *testing.T) {
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)

	dir := t.TempDir()
	spec := filepath.Join(dir, "lines.nomad.hcl")
	must.NoError(t, os.WriteFile(spec, []byte(`job "lines" {
  datacenters = ["*"]
  group "g" {
    task "t" {
      driver       = "raw_exec"
      kill_timeout = "1s"
      config {
        command = "/bin/sh"
        args    = ["-c", "i=1; while [ $i -le 30 ]; do echo line$i; i=$((i+1)); done; echo oops >&2; exec sleep 600"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`), 0o644))
	code, _, errOut := cli(t, addr, "job", "run", "-detach", spec)
	must.Eq(t, 0, code, must.Sprint(errOut))
	alloc := runningAlloc(t, c, "lines", 0)

	var all strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&all, "line%d\n", i)
	}
	waitFor(t, "the whole log", 10*time.Second, func() error {
		code, out, errOut := cli(t, addr, "alloc", "logs", "-job", "lin")
		if code != 0 || out != all.String() {
			return fmt.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		return nil
	})

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"tail -n", []string{"-job", "-tail", "-n", "3", "lines"}, "line28\nline29\nline30\n"},
		{"tail defaults to 10 lines", []string{"-job", "-tail", "lines"}, strings.Join(strings.SplitAfter(all.String(), "\n")[20:], "")},
		{"tail -c", []string{"-tail", "-c", "7", alloc.ID}, "line30\n"},
		{"stderr of a random alloc of a group", []string{"-job", "-group", "g", "-stderr", "lines"}, "oops\n"},
		{"-task wins over the argument", []string{"-task", "t", alloc.ID, "x"}, all.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := cli(t, addr, append([]string{"alloc", "logs"}, tc.args...)...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.Eq(t, tc.want, out)
		})
	}

	t.Run("-f alone follows stdout and stderr", func(t *testing.T) {
		cmd := exec.Command(os.Args[0], "alloc", "logs", "-address", addr, "-f", "-job", "lines")
		cmd.Env = append(os.Environ(), runAsCLI+"=1")
		var out, errOut syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		must.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		waitFor(t, "both logs followed", 10*time.Second, func() error {
			if out.String() != all.String() || errOut.String() != "oops\n" {
				return fmt.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
			}
			return nil
		})
	})

	t.Run("alloc fs -job", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "alloc", "fs", "-job", "lines", "alloc/logs/t.stdout.0")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, all.String(), out)
	})

	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no job", []string{"-job"}, "A job ID is required"},
		{"unknown job", []string{"-job", "nope"}, `No job(s) with prefix or ID "nope" found`},
		{"unknown group", []string{"-job", "-group", "x", "lines"}, `task group "x" doesn't exist or it has no allocations`},
		{"group without job", []string{"-group", "g", alloc.ID}, "-group is only valid with -job"},
		{"both -n and -c", []string{"-tail", "-n", "2", "-c", "4", alloc.ID}, "both -n and -c set"},
		{"both streams", []string{"-stdout", "-stderr", alloc.ID}, "Unable to support both stdout and stderr"},
		{"unknown task", []string{"-task", "x", alloc.ID}, "Could not find task named: x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := cli(t, addr, append([]string{"alloc", "logs"}, tc.args...)...)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, tc.wantErr)
		})
	}
}

// A followed tail shows the last lines of what the client sends first,
// then everything appended after.
func TestTailLinesReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			_, _ = io.WriteString(pw, "a\nb\nc\n")
			_, _ = io.WriteString(pw, "d\ne\n")
			time.Sleep(2 * time.Second)
			_, _ = io.WriteString(pw, "f\n")
			_ = pw.Close()
		}()
		out, err := io.ReadAll(&tailLinesReader{r: pr, lines: 2, settle: 500 * time.Millisecond})
		must.NoError(t, err)
		must.Eq(t, "d\ne\nf\n", string(out))
	})
}
