// Package exec is the exec driver: it runs a task isolated from the host,
// in PID, mount and IPC namespaces of its own, chrooted into its task dir
// populated from the host by the client's chroot_env, as an unprivileged
// user, inside a cgroup that enforces the task's CPU and memory
// reservation. It needs root and usable cgroups. The processes are run by
// the executor package, as raw_exec's are.
package exec

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/executor"
)

// Name is the driver's name in a task's "driver" field.
const Name = "exec"

// DefaultChrootEnv is what an exec task's chroot holds unless the client
// configures chroot_env: Nomad's defaults.
var DefaultChrootEnv = map[string]string{
	"/bin": "/bin", "/etc": "/etc", "/lib": "/lib", "/lib32": "/lib32", "/lib64": "/lib64",
	"/sbin": "/sbin", "/usr": "/usr", "/run/resolvconf": "/run/resolvconf",
}

// defaultUser is who a task without a user runs as.
const defaultUser = "nobody"

// defaultPath is a task's PATH unless its env sets one.
const defaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

// Options configures the driver.
type Options struct {
	// ChrootEnv maps host paths to their place in the chroot; empty means
	// DefaultChrootEnv.
	ChrootEnv map[string]string
	// Executable is the binary run as the waiter; "" means this process's
	// own executable.
	Executable string
}

// Driver is the exec driver.
type Driver struct {
	opts Options
	// Executor runs the tasks: RecoverTask, WaitTask, StopTask,
	// DestroyTask and TaskStats are its.
	*executor.Executor
	// unusable says why the driver cannot run here; nil when it can.
	unusable error
}

// New returns an exec driver; it fingerprints as undetected where the
// client is not root or cannot use cgroups.
func New(opts Options) *Driver {
	if len(opts.ChrootEnv) == 0 {
		opts.ChrootEnv = DefaultChrootEnv
	}
	return &Driver{opts: opts, Executor: executor.New(Name, opts.Executable), unusable: executor.CgroupsUsable()}
}

// Name returns "exec".
func (d *Driver) Name() string { return Name }

// Fingerprint reports the driver detected only where it can isolate and
// limit tasks.
func (d *Driver) Fingerprint() *drivers.Fingerprint {
	if d.unusable != nil {
		return &drivers.Fingerprint{HealthDescription: "exec driver needs root and cgroups: " + d.unusable.Error()}
	}
	return &drivers.Fingerprint{Detected: true, Healthy: true, HealthDescription: "Healthy"}
}

type config struct {
	command string
	args    []string
	pidMode string
	ipcMode string
	capAdd  []string
	capDrop []string
	workDir string
}

func parse(m map[string]any) (config, error) {
	c := config{pidMode: "private", ipcMode: "private"}
	if err := drivers.CheckKeys(Name, m, "command", "args", "pid_mode", "ipc_mode", "cap_add", "cap_drop", "work_dir"); err != nil {
		return c, err
	}
	invalid := func(format string, args ...any) error {
		return &drivers.ValidationError{Err: fmt.Errorf("exec: "+format, args...)}
	}
	cmd, ok, err := drivers.String(m, "command")
	if err != nil {
		return c, err
	}
	if !ok || cmd == "" {
		return c, invalid(`missing required config key "command"`)
	}
	c.command = cmd
	if c.args, err = drivers.Strings(m, "args"); err != nil {
		return c, err
	}
	for _, mode := range []struct {
		key string
		dst *string
	}{{"pid_mode", &c.pidMode}, {"ipc_mode", &c.ipcMode}} {
		v, ok, err := drivers.String(m, mode.key)
		if err != nil {
			return c, err
		}
		if !ok || v == "" {
			continue
		}
		if v != "private" && v != "host" {
			return c, invalid(`config key %q: %q is not allowed (allowed: "private", "host")`, mode.key, v)
		}
		*mode.dst = v
	}
	if c.capAdd, err = drivers.Strings(m, "cap_add"); err != nil {
		return c, err
	}
	if c.capDrop, err = drivers.Strings(m, "cap_drop"); err != nil {
		return c, err
	}
	if _, err := executor.TaskCapabilities(executor.DefaultCapabilities, c.capAdd, c.capDrop); err != nil {
		return c, invalid("%v", err)
	}
	if c.workDir, _, err = drivers.String(m, "work_dir"); err != nil {
		return c, err
	}
	if c.workDir != "" && !path.IsAbs(c.workDir) {
		return c, invalid(`config key "work_dir": %q must be an absolute path inside the task's chroot`, c.workDir)
	}
	return c, nil
}

// MountsVolumes reports that exec bind-mounts host volumes into the
// task's chroot.
func (d *Driver) MountsVolumes() bool { return true }

// ValidateConfig checks the task's config keys and values.
func (d *Driver) ValidateConfig(cfg map[string]any) error {
	_, err := parse(cfg)
	return err
}

// StartTask starts the task isolated and limited.
func (d *Driver) StartTask(tc *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if d.unusable != nil {
		return nil, fmt.Errorf("exec: driver unusable on this node: %w", d.unusable)
	}
	c, err := parse(tc.Config)
	if err != nil {
		return nil, err
	}
	user := tc.User
	if user == "" {
		user = defaultUser
	}
	caps, _ := executor.TaskCapabilities(executor.DefaultCapabilities, c.capAdd, c.capDrop)
	allocDir := filepath.Dir(tc.LogDir)
	if err := shareAllocDirs(allocDir); err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	iso := &executor.Isolation{
		PIDNamespace:        c.pidMode == "private",
		IPCNamespace:        c.ipcMode == "private",
		ChrootEnv:           d.opts.ChrootEnv,
		AllocDir:            allocDir,
		User:                user,
		Capabilities:        caps,
		AmbientCapabilities: c.capAdd,
		WorkDir:             c.workDir,
	}
	for _, m := range tc.Mounts {
		iso.Mounts = append(iso.Mounts, executor.VolumeMount{Source: m.HostPath, Destination: m.TaskPath, ReadOnly: m.ReadOnly})
	}
	limits := &executor.Limits{}
	if r := tc.Resources; r != nil {
		limits = &executor.Limits{CPUShares: r.CPUShares, MemoryMB: r.MemoryMB, MemoryMaxMB: r.MemoryMaxMB, Cores: r.Cores}
	}
	return d.Start(tc, executor.Command{
		Command:   c.command,
		Args:      c.args,
		Env:       taskEnv(tc.Env),
		Isolation: iso,
		Limits:    limits,
	})
}

// shareAllocDirs lets a task of any user write the alloc's shared data and
// tmp dirs, as Nomad's are; the logs stay the client's.
func shareAllocDirs(allocDir string) error {
	for _, d := range []string{"data", "tmp"} {
		p := filepath.Join(allocDir, d)
		if err := os.Chmod(p, 0o777|os.ModeSticky); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// taskEnv is the task's own environment, not the client's, with its
// directories as the task sees them inside the chroot and a default PATH.
func taskEnv(env map[string]string) []string {
	return drivers.IsolatedEnv(env, map[string]string{"PATH": defaultPath})
}
