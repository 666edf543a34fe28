package structs

import "time"

// Allocation desired statuses.
const (
	AllocDesiredStatusRun   = "run"
	AllocDesiredStatusStop  = "stop"
	AllocDesiredStatusEvict = "evict"
)

// Allocation client statuses.
const (
	AllocClientStatusPending  = "pending"
	AllocClientStatusRunning  = "running"
	AllocClientStatusComplete = "complete"
	AllocClientStatusFailed   = "failed"
	AllocClientStatusLost     = "lost"
	AllocClientStatusUnknown  = "unknown"
)

// Task states.
const (
	TaskStatePending = "pending"
	TaskStateRunning = "running"
	TaskStateDead    = "dead"
)

// Allocation is one placement of a task group on a node.
type Allocation struct {
	ID        string
	Namespace string
	EvalID    string
	Name      string
	NodeID    string
	NodeName  string
	JobID     string
	Job       *Job
	TaskGroup string

	// Resources and TaskResources are the legacy view that the API still
	// shows; AllocatedResources is authoritative.
	Resources          *Resources
	TaskResources      map[string]*Resources
	AllocatedResources *AllocatedResources

	Metrics *AllocMetric

	DesiredStatus      string
	DesiredDescription string
	DesiredTransition  DesiredTransition
	ClientStatus       string
	ClientDescription  string
	TaskStates         map[string]*TaskState
	// NetworkStatus is the alloc's network as its client set it up.
	NetworkStatus *AllocNetworkStatus

	FollowupEvalID     string
	PreviousAllocation string
	NextAllocation     string
	RescheduleTracker  *RescheduleTracker

	CreateIndex      uint64
	ModifyIndex      uint64
	AllocModifyIndex uint64

	// CreateTime is stamped once by the plan applier; max_run_duration
	// deadlines are anchored to it.
	CreateTime int64
	ModifyTime int64

	// SignedIdentities maps each task name to its workload identity, a
	// JWT signed by the servers at plan apply. It is a credential: the
	// HTTP API never shows it (see Sanitize), and the omitempty tag keeps
	// the emptied field out of the JSON, as Nomad's json:"-" does.
	SignedIdentities map[string]string `codec:",omitempty"`
	// SigningKeyID is the root key that signed SignedIdentities.
	SigningKeyID string
}

// GetNamespace is the namespace the alloc lives in ("" for nil).
func (a *Allocation) GetNamespace() string {
	if a == nil {
		return ""
	}
	return a.Namespace
}

// TerminalStatus reports whether the allocation is finished or told to stop.
func (a *Allocation) TerminalStatus() bool {
	switch a.DesiredStatus {
	case AllocDesiredStatusStop, AllocDesiredStatusEvict:
		return true
	}
	return a.ClientTerminalStatus()
}

// ClientTerminalStatus reports whether the client says the allocation ended.
func (a *Allocation) ClientTerminalStatus() bool {
	switch a.ClientStatus {
	case AllocClientStatusComplete, AllocClientStatusFailed, AllocClientStatusLost:
		return true
	}
	return false
}

// Usage is what the allocation holds on its node: its authoritative
// reservation, or the legacy Resources of an alloc written without one.
func (a *Allocation) Usage() ComparableResources {
	if a.AllocatedResources != nil {
		return a.AllocatedResources.Comparable()
	}
	var c ComparableResources
	if a.Resources != nil {
		c.CPU, c.MemoryMB, c.DiskMB = int64(a.Resources.CPU), int64(a.Resources.MemoryMB), int64(a.Resources.DiskMB)
	}
	return c
}

// MaxRunDeadline returns when the allocation's max_run_duration expires,
// and false when its group sets none.
func (a *Allocation) MaxRunDeadline() (time.Time, bool) {
	if a.Job == nil {
		return time.Time{}, false
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil || tg.MaxRunDuration == nil {
		return time.Time{}, false
	}
	return time.Unix(0, a.CreateTime).Add(*tg.MaxRunDuration), true
}

// Index returns the allocation's index within its group, parsed from the
// name "<job>.<group>[<index>]"; 0 when the name has no index.
func (a *Allocation) Index() uint {
	n := a.Name
	l := len(n)
	if l == 0 || n[l-1] != ']' {
		return 0
	}
	start := l - 2
	for start >= 0 && n[start] != '[' {
		start--
	}
	var idx uint
	for _, c := range n[start+1 : l-1] {
		if c < '0' || c > '9' {
			return 0
		}
		idx = idx*10 + uint(c-'0')
	}
	return idx
}

// AllocNetworkStatus is the network a client set up for an allocation;
// empty for host networking, which has no interface of its own.
type AllocNetworkStatus struct {
	InterfaceName string
	Address       string
	AddressIPv6   string
	DNS           *DNSConfig
}

// DesiredTransition carries server requests to move an allocation.
type DesiredTransition struct {
	Migrate         *bool
	Reschedule      *bool
	ForceReschedule *bool
	NoShutdownDelay *bool
}

// ShouldMigrate reports whether the allocation is to be stopped and
// placed again (a drain or `nomad alloc stop`).
func (d DesiredTransition) ShouldMigrate() bool { return d.Migrate != nil && *d.Migrate }

// Merge sets the fields of o that are set on d.
func (d *DesiredTransition) Merge(o *DesiredTransition) {
	if o.Migrate != nil {
		d.Migrate = o.Migrate
	}
	if o.Reschedule != nil {
		d.Reschedule = o.Reschedule
	}
	if o.ForceReschedule != nil {
		d.ForceReschedule = o.ForceReschedule
	}
	if o.NoShutdownDelay != nil {
		d.NoShutdownDelay = o.NoShutdownDelay
	}
}

// RescheduleTracker records past reschedules of an allocation's lineage.
type RescheduleTracker struct {
	Events []*RescheduleEvent
}

// RescheduleEvent is one reschedule of an allocation.
type RescheduleEvent struct {
	RescheduleTime int64
	PrevAllocID    string
	PrevNodeID     string
	Delay          time.Duration
}

// AllocatedResources is what the scheduler reserved for an allocation.
type AllocatedResources struct {
	Tasks  map[string]*AllocatedTaskResources
	Shared AllocatedSharedResources
}

// AllocatedTaskResources is one task's reservation.
type AllocatedTaskResources struct {
	Cpu      AllocatedCpuResources
	Memory   AllocatedMemoryResources
	Networks []*NetworkResource
}

// AllocatedCpuResources is a CPU reservation in MHz.
type AllocatedCpuResources struct {
	CpuShares     int64
	ReservedCores []uint16
}

// AllocatedMemoryResources is a memory reservation in MB.
type AllocatedMemoryResources struct {
	MemoryMB    int64
	MemoryMaxMB int64
}

// AllocatedSharedResources is the group-wide reservation.
type AllocatedSharedResources struct {
	DiskMB   int64
	Networks []*NetworkResource
	// Ports are the group's host ports with the values the scheduler
	// assigned.
	Ports []AllocatedPortMapping
}

// AllocatedPortMapping is one assigned port of an allocation, as the api
// module's PortMapping reads it.
type AllocatedPortMapping struct {
	Label  string
	Value  int
	To     int
	HostIP string
}

// Comparable sums an allocation's reservation for fit checks.
func (a *AllocatedResources) Comparable() ComparableResources {
	var c ComparableResources
	if a == nil {
		return c
	}
	for _, t := range a.Tasks {
		c.CPU += t.Cpu.CpuShares
		c.MemoryMB += t.Memory.MemoryMB
	}
	c.DiskMB = a.Shared.DiskMB
	return c
}

// ComparableResources is a flat resource vector used by fit checks.
type ComparableResources struct {
	CPU      int64
	MemoryMB int64
	DiskMB   int64
}

// Add adds o to c.
func (c *ComparableResources) Add(o ComparableResources) {
	c.CPU += o.CPU
	c.MemoryMB += o.MemoryMB
	c.DiskMB += o.DiskMB
}

// Superset reports whether c covers o, and names the first dimension that
// does not.
func (c ComparableResources) Superset(o ComparableResources) (bool, string) {
	switch {
	case c.CPU < o.CPU:
		return false, "cpu"
	case c.MemoryMB < o.MemoryMB:
		return false, "memory"
	case c.DiskMB < o.DiskMB:
		return false, "disk"
	}
	return true, ""
}

// TaskState is the client's view of one task of an allocation.
type TaskState struct {
	State       string
	Failed      bool
	Restarts    uint64
	LastRestart time.Time
	StartedAt   time.Time
	FinishedAt  time.Time
	Events      []*TaskEvent
}

// Successful reports whether the task ended without failing.
func (ts *TaskState) Successful() bool { return ts.State == TaskStateDead && !ts.Failed }

// Task event types, as Nomad names them.
const (
	TaskSetupFailure           = "Setup Failure"
	TaskDriverFailure          = "Driver Failure"
	TaskDriverMessage          = "Driver"
	TaskReceived               = "Received"
	TaskFailedValidation       = "Failed Validation"
	TaskStarted                = "Started"
	TaskTerminated             = "Terminated"
	TaskKilling                = "Killing"
	TaskKilled                 = "Killed"
	TaskRestarting             = "Restarting"
	TaskNotRestarting          = "Not Restarting"
	TaskRestartSignal          = "Restart Signaled"
	TaskSignaling              = "Signaling"
	TaskDownloadingArtifacts   = "Downloading Artifacts"
	TaskArtifactDownloadFailed = "Failed Artifact Download"
	TaskSiblingFailed          = "Sibling Task Failed"
	TaskSetup                  = "Task Setup"
	TaskLeaderDead             = "Leader Task Dead"
	TaskMainDead               = "Main Tasks Dead"
	TaskHookFailed             = "Task hook failed"
	TaskHookMessage            = "Task hook message"

	// TaskWaitingShuttingDownDelay marks the start of a task's or its
	// group's shutdown_delay, before the task is killed.
	TaskWaitingShuttingDownDelay = "Waiting for shutdown delay"
)

// TaskEvent is one entry in a task's history.
type TaskEvent struct {
	Type           string
	Time           int64
	DisplayMessage string
	Details        map[string]string
	Message        string

	FailsTask       bool
	RestartReason   string
	SetupError      string
	DriverError     string
	DriverMessage   string
	ExitCode        int
	Signal          int
	KillReason      string
	KillTimeout     time.Duration
	KillError       string
	StartDelay      int64
	ValidationError string
	FailedSibling   string
	// DownloadError is why an artifact could not be fetched.
	DownloadError string
	// TaskSignal and TaskSignalReason describe a Signaling event.
	TaskSignal       string
	TaskSignalReason string
}

// Sanitize returns the allocation without its signed identities, for
// answers that leave the cluster (the HTTP API); it is a shallow copy
// when there is something to remove.
func (a *Allocation) Sanitize() *Allocation {
	if a == nil || a.SignedIdentities == nil {
		return a
	}
	c := *a
	c.SignedIdentities = nil
	return &c
}
