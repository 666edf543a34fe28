package structs

import (
	"path"
	"strings"
	"time"
)

// Defaults applied by canonicalization, the same values the official
// client's api.Job.Canonicalize uses.
const (
	DefaultKillTimeout        = 5 * time.Second
	DefaultLogMaxFiles        = 10
	DefaultLogMaxFileSizeMB   = 10
	DefaultResourcesCPU       = 100
	DefaultResourcesMemoryMB  = 300
	DefaultEphemeralDiskMB    = 300
	DefaultAffinityWeight     = 50
	DefaultSpreadWeight       = 50
	DefaultTemplateChangeMode = "restart"
	DefaultTemplatePerms      = "0644"
	DefaultArtifactMode       = "any"
)

// DefaultUpdateStrategy is the rolling update of service and system jobs
// that set none.
func DefaultUpdateStrategy() UpdateStrategy {
	return UpdateStrategy{
		Stagger:          30 * time.Second,
		MaxParallel:      1,
		HealthCheck:      "checks",
		MinHealthyTime:   10 * time.Second,
		HealthyDeadline:  5 * time.Minute,
		ProgressDeadline: 10 * time.Minute,
	}
}

// DefaultMigrateStrategy is the migrate block of service groups that set
// none.
func DefaultMigrateStrategy() *MigrateStrategy {
	return &MigrateStrategy{
		MaxParallel:     1,
		HealthCheck:     "checks",
		MinHealthyTime:  10 * time.Second,
		HealthyDeadline: 5 * time.Minute,
	}
}

// DefaultRestartPolicy returns the restart policy of a group of the given
// job type that sets none: service and system jobs fail after 2 restarts
// in 30 minutes, batch work after 3 in 24 hours.
func DefaultRestartPolicy(jobType string) *RestartPolicy {
	switch jobType {
	case JobTypeService, JobTypeSystem:
		return &RestartPolicy{Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Mode: RestartPolicyModeFail}
	default:
		return &RestartPolicy{Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: RestartPolicyModeFail}
	}
}

// DefaultReschedulePolicy returns the reschedule policy of a group of the
// given job type that sets none, and nil for system and sysbatch jobs,
// which are never rescheduled.
func DefaultReschedulePolicy(jobType string) *ReschedulePolicy {
	switch jobType {
	case JobTypeService:
		return &ReschedulePolicy{Delay: 30 * time.Second, DelayFunction: RescheduleDelayExponential, MaxDelay: time.Hour, Unlimited: true}
	case JobTypeBatch:
		return &ReschedulePolicy{Attempts: 1, Interval: 24 * time.Hour, Delay: 5 * time.Second, DelayFunction: RescheduleDelayConstant}
	}
	return nil
}

// Canonicalize fills the defaults that api.Job.Canonicalize leaves unset
// (NodePool "default", a dispatch payload of "optional", operator "=" on
// constraints and affinities without one) and, for a job that did not
// come through the official client, every default that api.Job.Canonicalize
// would have set. A job registered through the api client and one built
// directly end up identical. Values the user set are kept; only zero
// values are filled, so Canonicalize is idempotent. Nil maps stay nil.
func (j *Job) Canonicalize() {
	if j == nil {
		return
	}
	if j.Namespace == "" {
		j.Namespace = DefaultNamespace
	}
	if j.Region == "" {
		j.Region = DefaultRegion
	}
	if j.Name == "" {
		j.Name = j.ID
	}
	if j.Type == "" {
		j.Type = JobTypeService
	}
	if j.Priority == 0 {
		j.Priority = JobDefaultPriority
	}
	if j.NodePool == "" {
		j.NodePool = DefaultNodePool
	}
	if len(j.Datacenters) == 0 {
		// As Nomad 1.5+: a job that names no datacenter may run in any.
		j.Datacenters = []string{"*"}
	}
	if j.Update == (UpdateStrategy{}) && (j.Type == JobTypeService || j.Type == JobTypeSystem) {
		j.Update = DefaultUpdateStrategy()
	}
	if p := j.Periodic; p != nil {
		if p.SpecType == "" {
			p.SpecType = PeriodicSpecCron
		}
		if p.TimeZone == "" {
			p.TimeZone = "UTC"
		}
		if len(p.Specs) == 0 {
			p.Specs = nil
		}
	}
	if p := j.ParameterizedJob; p != nil && p.Payload == "" {
		p.Payload = DispatchPayloadOptional
	}
	canonicalizeConstraints(j.Constraints)
	canonicalizeAffinities(j.Affinities)
	canonicalizeSpreads(j.Spreads)
	for _, tg := range j.TaskGroups {
		if tg != nil {
			tg.canonicalize(j)
		}
	}
}

func (tg *TaskGroup) canonicalize(j *Job) {
	if tg.EphemeralDisk == nil {
		tg.EphemeralDisk = &EphemeralDisk{SizeMB: DefaultEphemeralDiskMB}
	}
	if tg.Update == nil && j.Update != (UpdateStrategy{}) {
		u := j.Update
		tg.Update = &u
	}
	if tg.ReschedulePolicy == nil {
		if j.Reschedule != nil {
			r := *j.Reschedule
			tg.ReschedulePolicy = &r
		} else {
			tg.ReschedulePolicy = DefaultReschedulePolicy(j.Type)
		}
	}
	if tg.Migrate == nil {
		if j.Migrate != nil {
			m := *j.Migrate
			tg.Migrate = &m
		} else if j.Type == JobTypeService {
			tg.Migrate = DefaultMigrateStrategy()
		}
	}
	if tg.RestartPolicy == nil {
		tg.RestartPolicy = DefaultRestartPolicy(j.Type)
	}
	canonicalizeConstraints(tg.Constraints)
	canonicalizeAffinities(tg.Affinities)
	canonicalizeSpreads(tg.Spreads)
	for _, s := range tg.Services {
		if s != nil {
			s.canonicalize(j.Name + "-" + tg.Name)
		}
	}
	for _, t := range tg.Tasks {
		if t != nil {
			t.canonicalize(j, tg)
		}
	}
}

func (t *Task) canonicalize(j *Job, tg *TaskGroup) {
	if t.Resources == nil {
		t.Resources = &Resources{CPU: DefaultResourcesCPU, MemoryMB: DefaultResourcesMemoryMB}
	}
	if t.KillTimeout == 0 {
		t.KillTimeout = DefaultKillTimeout
	}
	if t.LogConfig == nil {
		t.LogConfig = &LogConfig{MaxFiles: DefaultLogMaxFiles, MaxFileSizeMB: DefaultLogMaxFileSizeMB}
	}
	if t.RestartPolicy == nil && tg.RestartPolicy != nil {
		rp := *tg.RestartPolicy
		t.RestartPolicy = &rp
	}
	canonicalizeConstraints(t.Constraints)
	canonicalizeAffinities(t.Affinities)
	for _, s := range t.Services {
		if s != nil {
			if s.TaskName == "" {
				s.TaskName = t.Name
			}
			s.canonicalize(j.Name + "-" + tg.Name + "-" + t.Name)
		}
	}
	for _, a := range t.Artifacts {
		if a != nil {
			a.canonicalize()
		}
	}
	for _, tmpl := range t.Templates {
		if tmpl != nil {
			tmpl.canonicalize()
		}
	}
}

func (s *Service) canonicalize(defaultName string) {
	if s.Name == "" {
		s.Name = defaultName
	}
	if s.AddressMode == "" {
		s.AddressMode = ServiceAddressModeAuto
	}
	if s.OnUpdate == "" {
		s.OnUpdate = ServiceOnUpdateHealthy
	}
	if s.Provider == "" {
		s.Provider = ServiceProviderConsul
	}
	if s.Cluster == "" {
		s.Cluster = ServiceDefaultCluster
	}
	for _, c := range s.Checks {
		if c != nil {
			c.canonicalize(s)
		}
	}
}

func (a *TaskArtifact) canonicalize() {
	if a.GetterMode == "" {
		a.GetterMode = DefaultArtifactMode
	}
	if a.RelativeDest == "" {
		if a.GetterMode == "file" {
			a.RelativeDest = path.Join("local", path.Base(a.GetterSource))
		} else {
			a.RelativeDest = "local/"
		}
	}
}

func (t *Template) canonicalize() {
	if t.ChangeMode == "" {
		t.ChangeMode = DefaultTemplateChangeMode
	}
	if t.ChangeSignal == "" && t.ChangeMode == "signal" {
		t.ChangeSignal = "SIGHUP"
	}
	t.ChangeSignal = strings.ToUpper(t.ChangeSignal)
	if t.Perms == "" {
		t.Perms = DefaultTemplatePerms
	}
	if t.LeftDelim == "" {
		t.LeftDelim = "{{"
	}
	if t.RightDelim == "" {
		t.RightDelim = "}}"
	}
}

func canonicalizeConstraints(cs []*Constraint) {
	for _, c := range cs {
		if c != nil && c.Operand == "" {
			c.Operand = "="
		}
	}
}

func canonicalizeAffinities(as []*Affinity) {
	for _, a := range as {
		if a == nil {
			continue
		}
		if a.Operand == "" {
			a.Operand = "="
		}
		if a.Weight == 0 {
			a.Weight = DefaultAffinityWeight
		}
	}
}

func canonicalizeSpreads(ss []*Spread) {
	for _, s := range ss {
		if s != nil && s.Weight == 0 {
			s.Weight = DefaultSpreadWeight
		}
	}
}
