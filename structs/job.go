package structs

import "time"

// Job types.
const (
	JobTypeService  = "service"
	JobTypeBatch    = "batch"
	JobTypeSystem   = "system"
	JobTypeSysBatch = "sysbatch"
	JobTypeCore     = "_core"
)

// Job statuses.
const (
	JobStatusPending = "pending"
	JobStatusRunning = "running"
	JobStatusDead    = "dead"
)

// Job priority bounds and defaults. A server's job_max_priority and
// job_default_priority move the upper bound and the default of a job's
// priority (Job.CheckPriority); an eval priority override stays within
// JobMinPriority and JobMaxPriority whatever they are, as in Nomad.
const (
	JobMinPriority     = 1
	JobDefaultPriority = 50
	// JobMaxPriority is the default of job_max_priority and the most an
	// eval priority override may ask for.
	JobMaxPriority = 100
	// JobMaxPriorityLimit is the largest job_max_priority a server
	// accepts (Nomad's structs.JobMaxPriority), below CoreJobPriority.
	JobMaxPriorityLimit = CoreJobPriority - 1
	CoreJobPriority     = 32767
)

// Defaults applied by canonicalization.
const (
	DefaultNamespace = "default"
	DefaultRegion    = "global"
	DefaultNodePool  = "default"
	AllNodePools     = "all"
)

// Job is the unit a user registers: one or more task groups scheduled
// together under one ID.
type Job struct {
	Region      string
	Namespace   string
	ID          string
	ParentID    string
	Name        string
	Type        string
	Priority    int
	AllAtOnce   bool
	Datacenters []string
	NodePool    string
	Constraints []*Constraint
	Affinities  []*Affinity
	Spreads     []*Spread
	TaskGroups  []*TaskGroup
	Update      UpdateStrategy
	Periodic    *PeriodicConfig

	ParameterizedJob         *ParameterizedJobConfig
	Dispatched               bool
	DispatchIdempotencyToken string
	Payload                  []byte

	Reschedule *ReschedulePolicy
	Migrate    *MigrateStrategy
	Meta       map[string]string

	Stop              bool
	Status            string
	StatusDescription string
	Stable            bool
	Version           uint64
	SubmitTime        int64

	CreateIndex    uint64
	ModifyIndex    uint64
	JobModifyIndex uint64
}

// NamespacedID returns the job's key in the state store.
func (j *Job) NamespacedID() NamespacedID {
	return NamespacedID{Namespace: j.Namespace, ID: j.ID}
}

// IsPeriodic reports whether the job launches children on a schedule.
func (j *Job) IsPeriodic() bool { return j.Periodic != nil }

// IsParameterized reports whether the job is a template for dispatched
// children (and not itself a dispatched child).
func (j *Job) IsParameterized() bool { return j.ParameterizedJob != nil && !j.Dispatched }

// LookupTaskGroup returns the group with the given name, or nil.
func (j *Job) LookupTaskGroup(name string) *TaskGroup {
	for _, tg := range j.TaskGroups {
		if tg.Name == name {
			return tg
		}
	}
	return nil
}

// NamespacedID names an object that lives in a namespace.
type NamespacedID struct {
	Namespace string
	ID        string
}

// String returns "<namespace>/<id>".
func (n NamespacedID) String() string { return n.Namespace + "/" + n.ID }

// UpdateStrategy configures rolling updates of service jobs.
type UpdateStrategy struct {
	Stagger          time.Duration
	MaxParallel      int
	HealthCheck      string
	MinHealthyTime   time.Duration
	HealthyDeadline  time.Duration
	ProgressDeadline time.Duration
	AutoRevert       bool
	AutoPromote      bool
	Canary           int
}

// IsEmpty reports whether no rolling update is configured.
func (u *UpdateStrategy) IsEmpty() bool { return u == nil || u.MaxParallel == 0 }

// MigrateStrategy configures how allocations move off draining nodes.
type MigrateStrategy struct {
	MaxParallel     int
	HealthCheck     string
	MinHealthyTime  time.Duration
	HealthyDeadline time.Duration
}

// Periodic spec types.
const (
	PeriodicSpecCron = "cron"
)

// PeriodicConfig launches child jobs on a cron schedule.
type PeriodicConfig struct {
	Enabled         bool
	Spec            string
	Specs           []string
	SpecType        string
	ProhibitOverlap bool
	TimeZone        string
}

// Dispatch payload requirements.
const (
	DispatchPayloadOptional  = "optional"
	DispatchPayloadRequired  = "required"
	DispatchPayloadForbidden = "forbidden"
)

// ParameterizedJobConfig makes a job a template for dispatched children.
type ParameterizedJobConfig struct {
	Payload      string
	MetaRequired []string
	MetaOptional []string
}

// Constraint operands.
const (
	ConstraintDistinctProperty  = "distinct_property"
	ConstraintDistinctHosts     = "distinct_hosts"
	ConstraintRegex             = "regexp"
	ConstraintVersion           = "version"
	ConstraintSemver            = "semver"
	ConstraintSetContains       = "set_contains"
	ConstraintSetContainsAll    = "set_contains_all"
	ConstraintSetContainsAny    = "set_contains_any"
	ConstraintAttributeIsSet    = "is_set"
	ConstraintAttributeIsNotSet = "is_not_set"
)

// Constraint restricts the nodes a job, group or task may run on.
type Constraint struct {
	LTarget string
	RTarget string
	Operand string
}

// String renders the constraint as "<ltarget> <operand> <rtarget>".
func (c *Constraint) String() string {
	return c.LTarget + " " + c.Operand + " " + c.RTarget
}

// Affinity expresses a weighted placement preference.
type Affinity struct {
	LTarget string
	RTarget string
	Operand string
	Weight  int8
}

// Spread asks for allocations to be spread over the values of an attribute.
type Spread struct {
	Attribute    string
	Weight       int8
	SpreadTarget []*SpreadTarget
}

// SpreadTarget is the desired share of allocations for one attribute value.
type SpreadTarget struct {
	Value   string
	Percent uint8
}

// Restart modes.
const (
	RestartPolicyModeDelay = "delay"
	RestartPolicyModeFail  = "fail"
)

// RestartPolicy says how the client restarts a failed task in place.
type RestartPolicy struct {
	Attempts        int
	Interval        time.Duration
	Delay           time.Duration
	Mode            string
	RenderTemplates bool
}

// Reschedule delay functions.
const (
	RescheduleDelayConstant    = "constant"
	RescheduleDelayExponential = "exponential"
	RescheduleDelayFibonacci   = "fibonacci"
)

// ReschedulePolicy says how the scheduler replaces a failed allocation on
// another node.
type ReschedulePolicy struct {
	Attempts      int
	Interval      time.Duration
	Delay         time.Duration
	DelayFunction string
	MaxDelay      time.Duration
	Unlimited     bool
}

// EphemeralDisk is the scratch disk shared by a group's tasks.
type EphemeralDisk struct {
	Sticky  bool
	SizeMB  int
	Migrate bool
}

// TaskGroup is a set of tasks placed together on one node.
type TaskGroup struct {
	Name             string
	Count            int
	Constraints      []*Constraint
	Affinities       []*Affinity
	Spreads          []*Spread
	Tasks            []*Task
	RestartPolicy    *RestartPolicy
	ReschedulePolicy *ReschedulePolicy
	EphemeralDisk    *EphemeralDisk
	Update           *UpdateStrategy
	Migrate          *MigrateStrategy
	Networks         []*NetworkResource
	Services         []*Service
	Meta             map[string]string
	ShutdownDelay    *time.Duration
	Scaling          *ScalingPolicy

	// Volumes are the host volumes the group needs, by the name its
	// tasks' volume_mount blocks use.
	Volumes map[string]*VolumeRequest

	// MaxRunDuration is the wall-clock limit of an allocation of this group,
	// counted from the allocation's CreateTime. Only batch and sysbatch jobs
	// may set it.
	MaxRunDuration *time.Duration
	// MaxRunDurationWarning, when set, signals the group's tasks before
	// the MaxRunDuration deadline.
	MaxRunDurationWarning *MaxRunDurationWarning `json:",omitempty"`
}

// Ask is what one allocation of the group reserves on its node: its
// tasks' CPU and memory and the group's ephemeral disk.
func (tg *TaskGroup) Ask() ComparableResources {
	var c ComparableResources
	for _, t := range tg.Tasks {
		if t.Resources == nil {
			continue
		}
		c.CPU += int64(t.Resources.CPU)
		c.MemoryMB += int64(t.Resources.MemoryMB)
	}
	if tg.EphemeralDisk != nil {
		c.DiskMB = int64(tg.EphemeralDisk.SizeMB)
	}
	return c
}

// LookupTask returns the task with the given name, or nil.
func (tg *TaskGroup) LookupTask(name string) *Task {
	for _, t := range tg.Tasks {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Lifecycle hooks.
const (
	TaskLifecycleHookPrestart  = "prestart"
	TaskLifecycleHookPoststart = "poststart"
	TaskLifecycleHookPoststop  = "poststop"
)

// TaskLifecycle places a task before, beside or after the main tasks.
type TaskLifecycle struct {
	Hook    string
	Sidecar bool
}

// Task is one process (or container) run by a driver.
type Task struct {
	Name            string
	Driver          string
	User            string
	Config          map[string]any
	Env             map[string]string
	Services        []*Service
	Constraints     []*Constraint
	Affinities      []*Affinity
	Resources       *Resources
	RestartPolicy   *RestartPolicy
	DispatchPayload *DispatchPayloadConfig
	Lifecycle       *TaskLifecycle
	Meta            map[string]string
	KillTimeout     time.Duration
	LogConfig       *LogConfig
	Artifacts       []*TaskArtifact
	Templates       []*Template
	Leader          bool
	ShutdownDelay   time.Duration
	KillSignal      string
	Kind            string

	// VolumeMounts make group volumes available to the task.
	VolumeMounts []*VolumeMount

	// Identity is the task's default workload identity block; nil when
	// the job has none (the task then gets its identity only where a
	// template needs one: see UsesWorkloadIdentity).
	Identity *WorkloadIdentity
}

// UsesWorkloadIdentity reports whether anything in the task can read its
// default workload identity: an identity block that puts it in the env or
// a file, or a template, which reads Nomad variables with it. The servers
// sign identities only for such tasks. A signature is an RSA operation,
// the largest single cost of placing an alloc, and an identity nothing can
// see does nothing.
func (t *Task) UsesWorkloadIdentity() bool {
	if t.Identity != nil && (t.Identity.Env || t.Identity.File) {
		return true
	}
	return len(t.Templates) > 0
}

// IsPrestart reports whether the task runs before the main tasks.
func (t *Task) IsPrestart() bool {
	return t.Lifecycle != nil && t.Lifecycle.Hook == TaskLifecycleHookPrestart
}

// IsPoststart reports whether the task starts after the main tasks started.
func (t *Task) IsPoststart() bool {
	return t.Lifecycle != nil && t.Lifecycle.Hook == TaskLifecycleHookPoststart
}

// IsPoststop reports whether the task runs after the main tasks ended.
func (t *Task) IsPoststop() bool {
	return t.Lifecycle != nil && t.Lifecycle.Hook == TaskLifecycleHookPoststop
}

// IsSidecar reports whether the task runs for the whole life of the group.
func (t *Task) IsSidecar() bool { return t.Lifecycle != nil && t.Lifecycle.Sidecar }

// DispatchPayloadConfig says where a dispatched payload is written.
type DispatchPayloadConfig struct {
	File string
}

// LogConfig bounds the task's log files.
type LogConfig struct {
	MaxFiles      int
	MaxFileSizeMB int
	Disabled      bool
}

// TaskArtifact is a file fetched into the task directory before start.
type TaskArtifact struct {
	GetterSource  string
	GetterOptions map[string]string
	GetterHeaders map[string]string
	GetterMode    string
	RelativeDest  string

	// GetterInsecure skips TLS verification of the download.
	GetterInsecure bool

	// Chown makes the task user the owner of the downloaded files.
	Chown bool
}

// Template change modes: what follows when a template's data changes (a
// Nomad Variable it reads is written) while the task runs.
const (
	TemplateChangeModeNoop    = "noop"
	TemplateChangeModeRestart = "restart"
	TemplateChangeModeSignal  = "signal"
	TemplateChangeModeScript  = "script"
)

// Template is a file rendered into the task directory.
type Template struct {
	SourcePath   string
	DestPath     string
	EmbeddedTmpl string
	ChangeMode   string
	ChangeSignal string
	Splay        time.Duration
	Perms        string
	LeftDelim    string
	RightDelim   string
	Envvars      bool

	// ChangeScript runs when ChangeMode is "script".
	ChangeScript *ChangeScript

	// Once renders the template a single time and never re-renders it.
	Once bool

	// Uid and Gid own the rendered file; nil keeps the task user's.
	Uid *int
	Gid *int

	// Wait bounds how long rendering waits for its sources to settle.
	Wait *WaitConfig

	// ErrMissingKey fails rendering when a map key is missing.
	ErrMissingKey bool
}

// ChangeScript is a command run inside the task when a template changes.
type ChangeScript struct {
	Command          string
	Args             []string
	Timeout          time.Duration
	FailOnError      bool
	RunOnFirstRender bool
}

// WaitConfig is the minimum and maximum quiet period before a template is
// rendered; nil means the renderer's default.
type WaitConfig struct {
	Min *time.Duration
	Max *time.Duration
}

// Service is a service block of a group or task. Services with provider
// "nomad" are registered in the servers' catalog while the alloc runs
// (ServiceRegistration) and their Checks run on the client.
type Service struct {
	Name        string
	PortLabel   string
	Tags        []string
	Provider    string
	AddressMode string
	TaskName    string
	Checks      []*ServiceCheck

	// CheckRestart is the service's check_restart, the default its checks
	// were merged with; kept so that the job reads back as it was written.
	CheckRestart *CheckRestart

	CanaryTags        []string
	EnableTagOverride bool
	Address           string
	Meta              map[string]string
	CanaryMeta        map[string]string
	TaggedAddresses   map[string]string
	OnUpdate          string
	Cluster           string
	Kind              string
}

// Service defaults applied by canonicalization.
const (
	ServiceAddressModeAuto = "auto"
	ServiceOnUpdateHealthy = "require_healthy"
	ServiceProviderConsul  = "consul"
	ServiceProviderNomad   = "nomad"
	ServiceDefaultCluster  = "default"
)

// Port is a named port of a network.
type Port struct {
	Label       string
	Value       int
	To          int
	HostNetwork string

	// IgnoreCollision lets a static port be shared with other allocations.
	IgnoreCollision bool
}

// NetworkResource is a network a group or node has.
type NetworkResource struct {
	Mode          string
	Device        string
	CIDR          string
	IP            string
	Hostname      string
	MBits         int
	ReservedPorts []Port
	DynamicPorts  []Port

	// DNS configures the resolver of a bridge or CNI network.
	DNS *DNSConfig

	// CNI passes arguments to CNI plugins.
	CNI *CNIConfig
}

// DNSConfig is the resolver configuration of a network namespace.
type DNSConfig struct {
	Servers  []string
	Searches []string
	Options  []string
}

// CNIConfig carries arguments for CNI plugins.
type CNIConfig struct {
	Args map[string]string
}

// Resources is what a task asks for, in Nomad's units (MHz, MB).
type Resources struct {
	CPU         int
	Cores       int
	MemoryMB    int
	MemoryMaxMB int
	DiskMB      int
	Networks    []*NetworkResource
}
