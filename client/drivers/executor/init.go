package executor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// The init step is the task's own process before it execs the task: the
// waiter starts it (in new namespaces for exec tasks), moves it into the
// task's cgroup while it waits on the sync pipe, and then lets it go; it
// isolates itself and execs the task, so nothing of the task runs outside
// the cgroup even for an instant. Its only way to report a failure is the
// error pipe, which the exec closes on success.
const (
	initSyncFD = 3
	initErrFD  = 4
)

// startInit starts the init step of spec and returns once the task has
// been exec'd (or failed to be).
func startInit(specPath string, spec *waiterSpec, stdout, stderr *os.File) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable for the init step: %w", err)
	}
	syncR, syncW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer syncW.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		syncR.Close()
		return nil, err
	}
	defer errR.Close()

	cmd := exec.Command(exe, InitArg, specPath)
	cmd.Dir = spec.Dir
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.ExtraFiles = []*os.File{syncR, errW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if iso := spec.Isolation; iso != nil {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNS
		if iso.PIDNamespace {
			cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWPID
		}
		if iso.IPCNamespace {
			cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWIPC
		}
	}
	cmd.SysProcAttr.Cloneflags |= networkCloneflags(spec.Network)
	err = cmd.Start()
	syncR.Close()
	errW.Close()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Command, err)
	}
	abort := func(err error) (*exec.Cmd, error) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	if len(spec.Cgroup) > 0 {
		if err := joinCgroup(spec.Cgroup, cmd.Process.Pid); err != nil {
			return abort(err)
		}
	}
	if _, err := syncW.Write([]byte{1}); err != nil {
		return abort(fmt.Errorf("release init step: %w", err))
	}
	msg, _ := io.ReadAll(errR)
	if len(msg) > 0 {
		return abort(errors.New(string(msg)))
	}
	return cmd, nil
}

// runInit is the init step's main: it never returns on success.
func runInit(specPath string) int {
	errPipe := os.NewFile(initErrFD, "init-error")
	syscall.CloseOnExec(initErrFD)
	fail := func(err error) int {
		_, _ = errPipe.WriteString(err.Error())
		return 1
	}
	syncPipe := os.NewFile(initSyncFD, "init-sync")
	var b [1]byte
	if n, _ := syncPipe.Read(b[:]); n != 1 {
		// The waiter gave up on this task.
		return 1
	}
	syncPipe.Close()

	spec, err := readSpec(specPath)
	if err != nil {
		return fail(err)
	}
	// Capability bounding sets are per thread: the thread that drops them
	// must be the one that execs.
	runtime.LockOSThread()
	if spec.Network != nil {
		if err := joinNetwork(spec.Network); err != nil {
			return fail(err)
		}
	}
	if iso := spec.Isolation; iso != nil {
		iso.Mounts = append(iso.Mounts, networkMounts(spec.Network)...)
		cred, err := lookupUser(iso.User)
		if err != nil {
			return fail(err)
		}
		if err := isolate(spec.Dir, iso, cred); err != nil {
			return fail(err)
		}
		cmdPath, err := resolveCommand(spec.Command, "/", spec.Env)
		if err != nil {
			return fail(err)
		}
		if err := dropPrivileges(cred, iso); err != nil {
			return fail(err)
		}
		return fail(execTask(cmdPath, spec))
	}
	if err := mountNetworkFiles(spec.Network); err != nil {
		return fail(err)
	}
	if err := os.Chdir(spec.Dir); err != nil {
		return fail(err)
	}
	cmdPath, err := resolveCommand(spec.Command, spec.Dir, spec.Env)
	if err != nil {
		return fail(err)
	}
	return fail(execTask(cmdPath, spec))
}

func execTask(path string, spec *waiterSpec) error {
	argv := append([]string{spec.Command}, spec.Args...)
	err := syscall.Exec(path, argv, spec.Env)
	return fmt.Errorf("start %s: %w", spec.Command, err)
}

// resolveCommand finds the task's command as Nomad does: a relative path
// is tried against the task dir first, then looked up in the task's PATH.
func resolveCommand(command, taskDir string, env []string) (string, error) {
	if filepath.IsAbs(command) {
		return command, nil
	}
	if p := filepath.Join(taskDir, command); isExecutable(p) {
		return p, nil
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			_ = os.Setenv("PATH", v)
		}
	}
	p, err := exec.LookPath(command)
	if err != nil {
		return "", fmt.Errorf("start %s: %w", command, err)
	}
	return p, nil
}
