// Package drivers defines the small interface between a task runner and
// the thing that runs a task (a process, a fake), plus helpers shared by
// the drivers.
package drivers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Driver runs tasks. Implementations must be safe for concurrent use;
// every method but Name and Fingerprint takes the task ID given in
// TaskConfig.ID.
type Driver interface {
	// Name is the driver's name in a task's "driver" field.
	Name() string

	// Fingerprint reports whether the driver can run tasks on this node.
	Fingerprint() *Fingerprint

	// ValidateConfig checks a task's driver config before it starts; a
	// *ValidationError names the offending key.
	ValidateConfig(cfg map[string]any) error

	// StartTask starts a task and returns the handle to persist so the
	// task can be recovered after a client restart.
	StartTask(cfg *TaskConfig) (*TaskHandle, error)

	// RecoverTask re-attaches to a task started by an earlier client
	// process. It fails when the task can no longer be tracked.
	RecoverTask(h *TaskHandle) error

	// WaitTask returns a channel that yields the task's exit once.
	WaitTask(ctx context.Context, taskID string) (<-chan *ExitResult, error)

	// StopTask sends signal (a name like "SIGINT"; "" means SIGINT) and,
	// if the task is still running after timeout, kills it for good. It
	// returns once the kill is delivered, not when the task has exited.
	StopTask(taskID string, timeout time.Duration, signal string) error

	// DestroyTask forgets the task, killing what is left of it.
	DestroyTask(taskID string) error

	// TaskStats measures the task's processes.
	TaskStats(taskID string) (*TaskUsage, error)
}

// Fingerprint is a driver's view of its health on this node.
type Fingerprint struct {
	Detected          bool
	Healthy           bool
	HealthDescription string
	Attributes        map[string]string
}

// TaskConfig is everything a driver needs to start one run of a task.
type TaskConfig struct {
	// ID is unique per run of a task (it changes on every restart).
	ID        string
	AllocID   string
	Name      string
	JobName   string
	TaskGroup string
	User      string

	// Config is the task's driver config, already interpolated.
	Config map[string]any
	Env    map[string]string

	// TaskDir is the task's working directory, <alloc dir>/<task>.
	TaskDir string
	// LogDir is the alloc's shared log directory, <alloc dir>/alloc/logs.
	LogDir string
	// MaxFiles and MaxFileSizeMB bound the task's log files.
	MaxFiles      int
	MaxFileSizeMB int

	// Resources is what the scheduler reserved for the task; drivers that
	// enforce limits read it. Nil means no reservation is known.
	Resources *Resources

	// Mounts are the task's host volumes; drivers that give a task its
	// own filesystem (VolumeMounter) bind-mount them, the others leave
	// them where they are.
	Mounts []*Mount

	// LogsDisabled discards the task's stdout and stderr instead of
	// writing log files (logs { disabled = true }).
	LogsDisabled bool

	// Network, when set, is the alloc's own network namespace (group
	// network mode "bridge" or "cni/<name>"), which the task joins; nil
	// means the host's network.
	Network *NetworkIsolation

	// Emit records a driver message as a task event (Nomad's "Driver"
	// event, such as "Downloading image"), with details such as the
	// image; nil discards them. It must not block for long: drivers call
	// it from the start path. It is not persisted with the task handle.
	Emit func(message string, details map[string]string) `codec:"-" json:"-"`
}

// EmitEvent sends a driver message through c.Emit, when one is set.
func (c *TaskConfig) EmitEvent(message string, details map[string]string) {
	if c != nil && c.Emit != nil {
		c.Emit(message, details)
	}
}

// Mount is a host directory made available to a task.
type Mount struct {
	// Volume is the group volume's name.
	Volume string
	// HostPath is the directory on the node.
	HostPath string
	// TaskPath is where the task sees it, inside its own filesystem.
	TaskPath string
	ReadOnly bool
}

// NetworkIsolation is an alloc's network namespace as tasks join it.
type NetworkIsolation struct {
	// Path is the pinned namespace (/var/run/netns/<alloc ID>).
	Path string
	// HostsFile and ResolvConf, when set, are files the task sees as
	// /etc/hosts and /etc/resolv.conf (the group's hostname and dns).
	HostsFile  string
	ResolvConf string
	// Hostname, when set, is the task's hostname, in a UTS namespace of
	// its own.
	Hostname string
}

// NetworkCreator is implemented by a driver whose tasks join an alloc's
// network namespace through a container of its own (docker's pause
// container, Nomad's infra_image) rather than by path. The client calls
// CreateNetwork before it sets the namespace up and configures the
// namespace at the path returned; it calls DestroyNetwork after tearing
// the namespace down. Both are idempotent, by alloc ID.
type NetworkCreator interface {
	CreateNetwork(allocID string, spec *NetworkCreateSpec) (netnsPath string, err error)
	DestroyNetwork(allocID string) error
}

// NetworkCreateSpec is what the holder of an alloc's namespace is made
// with: the group network's hostname and dns, which tasks joining it see.
type NetworkCreateSpec struct {
	JobName   string
	TaskGroup string
	Hostname  string
	// DNSServers, DNSSearches and DNSOptions are the group's dns block.
	DNSServers  []string
	DNSSearches []string
	DNSOptions  []string
}

// VolumeMounter is implemented by drivers that bind-mount TaskConfig.Mounts
// into the task's own filesystem; a task of any other driver finds its
// volumes at their host paths.
type VolumeMounter interface {
	MountsVolumes() bool
}

// Resources is a task's reservation as a driver enforces it.
type Resources struct {
	// CPUShares is the task's cpu in MHz, its relative CPU weight.
	CPUShares int64
	// MemoryMB is the reserved memory; the hard limit unless MemoryMaxMB
	// is set.
	MemoryMB int64
	// MemoryMaxMB is the hard limit when memory oversubscription is on.
	MemoryMaxMB int64
	// Cores are the CPU cores reserved for the task alone.
	Cores []uint16
}

// StdoutPrefix returns the path of the task's stdout files without the
// rotation index: "<logdir>/<task>.stdout".
func (c *TaskConfig) StdoutPrefix() string { return c.LogDir + "/" + c.Name + ".stdout" }

// StderrPrefix returns the path of the task's stderr files without the
// rotation index.
func (c *TaskConfig) StderrPrefix() string { return c.LogDir + "/" + c.Name + ".stderr" }

// TaskHandle is what a client persists to find a task again after a
// restart.
type TaskHandle struct {
	Driver string
	Config *TaskConfig
	// State is the driver's own encoding of what it needs to re-attach.
	State []byte
}

// ExitResult is how a task ended.
type ExitResult struct {
	ExitCode int
	Signal   int
	// OOMKilled is set when the kernel killed the task for exceeding its
	// memory limit.
	OOMKilled bool
	// Err is set when the exit could not be observed properly, or says
	// why the task was killed.
	Err error
}

// OOMKilledMessage is the exit message of a task the kernel killed for
// exceeding its memory limit, worded as Nomad's drivers word it.
const OOMKilledMessage = "OOM Killed"

// Successful reports whether the task exited with code 0 and no signal.
func (r *ExitResult) Successful() bool {
	return r.ExitCode == 0 && r.Signal == 0 && r.Err == nil
}

// TaskUsage is a point-in-time measurement of a task's processes.
type TaskUsage struct {
	RSS uint64
	// Usage is all memory charged to the task (RSS plus page cache);
	// zero when only RSS is measured.
	Usage uint64
	// MaxUsage is the most memory ever charged to the task.
	MaxUsage   uint64
	UserTicks  float64
	SysTicks   float64
	Percent    float64
	TotalTicks float64
	Pids       []int
	Measured   []string
	Timestamp  time.Time
}

// ValidationError is a task config a driver refuses before starting.
type ValidationError struct {
	Err error
}

func (e *ValidationError) Error() string { return e.Err.Error() }

func (e *ValidationError) Unwrap() error { return e.Err }

// ErrTaskNotFound is returned for a task ID the driver does not track.
var ErrTaskNotFound = errors.New("task not found")

// CheckKeys returns a *ValidationError naming the first key of cfg that is
// not in allowed.
func CheckKeys(driver string, cfg map[string]any, allowed ...string) error {
	var unknown []string
	for k := range cfg {
		ok := false
		for _, a := range allowed {
			if k == a {
				ok = true
				break
			}
		}
		if !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return &ValidationError{Err: fmt.Errorf("%s: unsupported config key %q (allowed: %s)",
		driver, unknown[0], strings.Join(allowed, ", "))}
}

// String returns cfg[key] as a string; ok is false when the key is absent.
func String(cfg map[string]any, key string) (string, bool, error) {
	v, ok := cfg[key]
	if !ok || v == nil {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, &ValidationError{Err: fmt.Errorf("config key %q must be a string, got %T", key, v)}
	}
	return s, true, nil
}

// Int returns cfg[key] as an int; numbers arrive as int64 or float64 after
// decoding, and numeric strings are accepted too.
func Int(cfg map[string]any, key string) (int, bool, error) {
	v, ok := cfg[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	switch n := v.(type) {
	case int:
		return n, true, nil
	case int64:
		return int(n), true, nil
	case uint64:
		return int(n), true, nil
	case float64:
		return int(n), true, nil
	case string:
		var i int
		if _, err := fmt.Sscanf(n, "%d", &i); err == nil {
			return i, true, nil
		}
	}
	return 0, true, &ValidationError{Err: fmt.Errorf("config key %q must be an integer, got %v", key, v)}
}

// Duration returns cfg[key] as a duration; a string is parsed with
// time.ParseDuration and a number is taken as nanoseconds.
func Duration(cfg map[string]any, key string) (time.Duration, bool, error) {
	v, ok := cfg[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	if s, isStr := v.(string); isStr {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, true, &ValidationError{Err: fmt.Errorf("config key %q: %v", key, err)}
		}
		return d, true, nil
	}
	n, _, err := Int(cfg, key)
	if err != nil {
		return 0, true, &ValidationError{Err: fmt.Errorf("config key %q must be a duration, got %v", key, v)}
	}
	return time.Duration(n), true, nil
}

// Strings returns cfg[key] as a list of strings.
func Strings(cfg map[string]any, key string) ([]string, error) {
	v, ok := cfg[key]
	if !ok || v == nil {
		return nil, nil
	}
	switch l := v.(type) {
	case []string:
		return l, nil
	case []any:
		out := make([]string, 0, len(l))
		for i, e := range l {
			s, isStr := e.(string)
			if !isStr {
				return nil, &ValidationError{Err: fmt.Errorf("config key %q: element %d must be a string, got %T", key, i, e)}
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, &ValidationError{Err: fmt.Errorf("config key %q must be a list of strings, got %T", key, v)}
}
