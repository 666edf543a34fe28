// Package rawexec runs a task as a plain process of the client's user,
// without isolation. Where the client can use cgroups, each run still gets
// a cgroup without limits, so its stats and the kill of all its processes
// work as for exec tasks. The processes are run by the executor package.
package rawexec

import (
	"errors"
	"os"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/executor"
)

// Name is the driver's name in a task's "driver" field.
const Name = "raw_exec"

// Options configures the driver.
type Options struct {
	// Enabled turns the driver on; raw_exec is off unless the operator
	// enables it (client option "driver.raw_exec.enable").
	Enabled bool
	// Executable is the binary run as the waiter; "" means this process's
	// own executable.
	Executable string
}

// Driver is the raw_exec driver.
type Driver struct {
	opts Options
	// Executor runs the tasks: RecoverTask, WaitTask, StopTask,
	// DestroyTask and TaskStats are its.
	*executor.Executor
	// cgroups says whether runs get a cgroup; decided once, at start.
	cgroups bool
}

// New returns a raw_exec driver.
func New(opts Options) *Driver {
	return &Driver{opts: opts, Executor: executor.New(Name, opts.Executable), cgroups: executor.CgroupsUsable() == nil}
}

// Name returns "raw_exec".
func (d *Driver) Name() string { return Name }

// Fingerprint reports the driver detected and healthy only when enabled.
func (d *Driver) Fingerprint() *drivers.Fingerprint {
	if !d.opts.Enabled {
		return &drivers.Fingerprint{HealthDescription: "disabled"}
	}
	return &drivers.Fingerprint{Detected: true, Healthy: true, HealthDescription: "Healthy"}
}

type config struct {
	command string
	args    []string
}

func parse(m map[string]any) (config, error) {
	var c config
	if err := drivers.CheckKeys(Name, m, "command", "args"); err != nil {
		return c, err
	}
	cmd, ok, err := drivers.String(m, "command")
	if err != nil {
		return c, err
	}
	if !ok || cmd == "" {
		return c, &drivers.ValidationError{Err: errors.New(`raw_exec: missing required config key "command"`)}
	}
	c.command = cmd
	if c.args, err = drivers.Strings(m, "args"); err != nil {
		return c, err
	}
	return c, nil
}

// ValidateConfig checks for "command", "args" and nothing else.
func (d *Driver) ValidateConfig(cfg map[string]any) error {
	_, err := parse(cfg)
	return err
}

// StartTask starts the task as the client's user, in the client's
// environment with the task's on top.
func (d *Driver) StartTask(tc *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	c, err := parse(tc.Config)
	if err != nil {
		return nil, err
	}
	cmd := executor.Command{Command: c.command, Args: c.args, Env: buildEnv(tc.Env)}
	if d.cgroups {
		// No CPU or memory limits, as in Nomad: the cgroup is for stats
		// and kill-all. Reserved cores are the task's alone, though, so
		// it is pinned to them as Nomad's raw_exec pins it.
		cmd.Limits = &executor.Limits{}
		if r := tc.Resources; r != nil {
			cmd.Limits.Cores = r.Cores
		}
	}
	return d.Start(tc, cmd)
}

// buildEnv is the client's environment with the task's on top, as Nomad
// gives raw_exec tasks.
func buildEnv(taskEnv map[string]string) []string {
	env := make(map[string]string)
	for _, kv := range os.Environ() {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				env[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	for k, v := range taskEnv {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
