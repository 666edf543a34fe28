package structs

import (
	"fmt"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/cronexpr"
)

// Limits checked by Validate.
const (
	MinResourcesCPU       = 1
	MinResourcesMemoryMB  = 10
	MinEphemeralDiskMB    = 10
	MinRescheduleDelay    = 5 * time.Second
	MaxPort               = 65535
	allowedJobTypes       = "service, batch, system, sysbatch"
	allowedDelayFunctions = "constant, exponential, fibonacci"
	allowedLifecycleHooks = "prestart, poststart, poststop"
	allowedPayloads       = "optional, required, forbidden"
)

// Validate checks a canonicalized job and returns a *MultiError with one
// message per problem, or nil. Each message names where the problem is
// (the job, a task group, a task), the field, the value given and what is
// allowed, for example
//
//	Task group "web", task "main": resources memory 5 is not allowed: must be at least 10 MB
//
// Messages come in a stable order: job fields, then each group in order
// with its tasks.
func (j *Job) Validate() error {
	var errs MultiError
	add := func(format string, a ...any) { errs.Add(fmt.Errorf(format, a...)) }

	switch {
	case j.ID == "":
		add("Job id must not be empty")
	case strings.Contains(j.ID, " "):
		add("Job id %q is not allowed: must not contain spaces", j.ID)
	case strings.Contains(j.ID, "\x00"):
		add("Job id %q is not allowed: must not contain null bytes", j.ID)
	}
	if j.Name == "" {
		add("Job name must not be empty")
	}
	if j.Region == "" {
		add("Job region must not be empty")
	}
	if j.Namespace == "" {
		add("Job namespace must not be empty")
	}
	switch j.Type {
	case JobTypeService, JobTypeBatch, JobTypeSystem, JobTypeSysBatch:
	case JobTypeCore:
		// Core jobs are created by the server, never registered by users.
	default:
		add("Job type %q is not allowed: must be one of %s", j.Type, allowedJobTypes)
	}
	// The upper bound is the server's job_max_priority (CheckPriority);
	// above JobMaxPriorityLimit no server accepts it.
	switch {
	case j.Type == JobTypeCore:
	case j.Priority < JobMinPriority:
		add("Job priority %d is not allowed: must be at least %d", j.Priority, JobMinPriority)
	case j.Priority > JobMaxPriorityLimit:
		add("Job priority %d is not allowed: must be at most %d, the highest job_max_priority a server takes", j.Priority, JobMaxPriorityLimit)
	}
	if len(j.Datacenters) == 0 {
		add("Job datacenters must list at least one datacenter, got none")
	}
	if !tooMany(&errs, "Job", "datacenters", len(j.Datacenters), MaxListEntries) {
		for _, dc := range j.Datacenters {
			if dc == "" {
				add("Job datacenters entry %q is not allowed: must not be empty", dc)
			}
		}
	}
	tooMany(&errs, "Job", "meta keys", len(j.Meta), MaxMapKeys)
	validateConstraints(&errs, "Job", j.Constraints, false)
	validateAffinities(&errs, "Job", j.Affinities)
	validateSpreads(&errs, "Job", j.Spreads)
	j.validatePeriodic(&errs)
	j.validateParameterized(&errs)

	if len(j.TaskGroups) == 0 {
		add("Job must have at least one task group, got none")
	}
	if tooMany(&errs, "Job", "task groups", len(j.TaskGroups), MaxTaskGroupsPerJob) {
		return errs.ErrorOrNil()
	}
	seen := make(map[string]int, len(j.TaskGroups))
	for i, tg := range j.TaskGroups {
		if tg == nil {
			add("Task group %d is null: a group needs a name and tasks", i+1)
			continue
		}
		if tg.Name == "" {
			add("Task group %d has an empty name: a group needs a name", i+1)
		} else {
			seen[tg.Name]++
			if seen[tg.Name] == 2 {
				add("Task group %q is defined %d times: group names must be unique", tg.Name, countGroups(j.TaskGroups, tg.Name))
			}
		}
		tg.validate(&errs, j)
	}
	return errs.ErrorOrNil()
}

func countGroups(tgs []*TaskGroup, name string) int {
	n := 0
	for _, tg := range tgs {
		if tg != nil && tg.Name == name {
			n++
		}
	}
	return n
}

// Warnings returns advice about a valid job that the user may not expect,
// as a *MultiError, or nil.
func (j *Job) Warnings() error {
	var errs MultiError
	for _, tg := range j.TaskGroups {
		if tg == nil {
			continue
		}
		if tg.Update != nil && (j.Type == JobTypeBatch || j.Type == JobTypeSysBatch) {
			errs.Add(fmt.Errorf("Task group %q: update is ignored for %s jobs", tg.Name, j.Type))
		}
	}
	return errs.ErrorOrNil()
}

func (j *Job) validatePeriodic(errs *MultiError) {
	p := j.Periodic
	if p == nil {
		return
	}
	if j.ParameterizedJob != nil {
		errs.Add(fmt.Errorf("Job cannot be both periodic and parameterized: a job is either launched on a schedule or dispatched"))
	}
	if !p.Enabled {
		return
	}
	if j.Type != JobTypeBatch && j.Type != JobTypeSysBatch {
		errs.Add(fmt.Errorf("Job periodic is only allowed for batch and sysbatch jobs, not %s jobs", j.Type))
	}
	if p.SpecType != PeriodicSpecCron {
		errs.Add(fmt.Errorf("Job periodic spec type %q is not allowed: must be %q", p.SpecType, PeriodicSpecCron))
		return
	}
	if p.Spec == "" && len(p.Specs) == 0 {
		errs.Add(fmt.Errorf("Job periodic must set cron or crons when enabled, got neither"))
		return
	}
	if p.Spec != "" && len(p.Specs) > 0 {
		errs.Add(fmt.Errorf("Job periodic sets both cron %q and crons: set only one", p.Spec))
	}
	if tooMany(errs, "Job periodic", "crons", len(p.Specs), MaxListEntries) {
		return
	}
	specs := p.Specs
	if p.Spec != "" {
		specs = append([]string{p.Spec}, specs...)
	}
	for _, s := range specs {
		if err := checkCron(s); err != nil {
			errs.Add(fmt.Errorf("Job periodic cron %q is not a valid cron expression: %v", s, err))
		}
	}
}

// checkCron parses a cron expression; cronexpr panics on some inputs.
func checkCron(spec string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	_, err = cronexpr.Parse(spec)
	return err
}

func (j *Job) validateParameterized(errs *MultiError) {
	p := j.ParameterizedJob
	if p == nil || j.Dispatched {
		return
	}
	if j.Type != JobTypeBatch && j.Type != JobTypeSysBatch {
		errs.Add(fmt.Errorf("Job parameterized is only allowed for batch and sysbatch jobs, not %s jobs", j.Type))
	}
	switch p.Payload {
	case DispatchPayloadOptional, DispatchPayloadRequired, DispatchPayloadForbidden:
	default:
		errs.Add(fmt.Errorf("Job parameterized payload %q is not allowed: must be one of %s", p.Payload, allowedPayloads))
	}
	required := make(map[string]bool, len(p.MetaRequired))
	for _, k := range p.MetaRequired {
		required[k] = true
	}
	for _, k := range p.MetaOptional {
		if required[k] {
			errs.Add(fmt.Errorf("Job parameterized meta key %q is both in meta_required and meta_optional: list it once", k))
		}
	}
}

func (tg *TaskGroup) validate(errs *MultiError, j *Job) {
	ctx := fmt.Sprintf("Task group %q", tg.Name)
	add := func(format string, a ...any) { errs.Add(fmt.Errorf(ctx+": "+format, a...)) }

	if tg.Count < 0 {
		add("count %d is not allowed: must be zero or more", tg.Count)
	} else if tg.Count > 1 && (j.Type == JobTypeSystem || j.Type == JobTypeSysBatch) {
		add("count %d is not allowed for %s jobs: must be 0 or 1 (one allocation runs per node)", tg.Count, j.Type)
	}

	if d := tg.MaxRunDuration; d != nil {
		if err := ValidateMaxRunDuration(j.Type, *d); err != nil {
			add("%s", err)
		}
	}
	if w := tg.MaxRunDurationWarning; w != nil {
		var we MultiError
		we.Add(ValidateMaxRunDurationWarning(w, tg.MaxRunDuration))
		for _, err := range we.Errors {
			add("%s", err)
		}
	}
	if d := tg.ShutdownDelay; d != nil && *d < 0 {
		add("shutdown_delay %s is not allowed: must not be negative", *d)
	}
	if p := tg.Scaling; p != nil {
		p.validate(tg.Count, add)
		tooDeep(errs, ctx, "scaling policy", p.Policy)
	}
	tooMany(errs, ctx, "meta keys", len(tg.Meta), MaxMapKeys)

	validateConstraints(errs, ctx, tg.Constraints, false)
	validateAffinities(errs, ctx, tg.Affinities)
	validateSpreads(errs, ctx, tg.Spreads)
	if tg.RestartPolicy != nil {
		validateRestart(errs, ctx, tg.RestartPolicy)
	}
	tg.validateReschedule(errs, ctx, j)
	if d := tg.EphemeralDisk; d != nil && d.SizeMB < MinEphemeralDiskMB {
		add("ephemeral_disk size %d is not allowed: must be at least %d MB", d.SizeMB, MinEphemeralDiskMB)
	}
	if u := tg.Update; u != nil && (j.Type == JobTypeService || j.Type == JobTypeSystem) {
		validateUpdate(errs, ctx, u)
	}
	if m := tg.Migrate; m != nil {
		validateMigrate(errs, ctx, m)
	}
	if len(tg.Networks) > 1 {
		add("%d networks are not allowed: at most one network per group", len(tg.Networks))
	}
	ports := make(map[string]bool)
	for _, n := range tg.Networks {
		validateNetwork(errs, ctx, n, ports)
	}
	tg.validateServices(errs, ctx, ports)
	if !tooMany(errs, ctx, "volumes", len(tg.Volumes), MaxListEntries) {
		validateVolumes(errs, ctx, tg.Volumes)
	}

	if len(tg.Tasks) == 0 {
		errs.Add(fmt.Errorf("%s has no tasks: at least one task is required", ctx))
		return
	}
	if tooMany(errs, ctx, "tasks", len(tg.Tasks), MaxTasksPerGroup) {
		return
	}
	seen := make(map[string]int, len(tg.Tasks))
	var leaders []string
	for i, t := range tg.Tasks {
		if t == nil {
			add("task %d is null: a task needs a name and a driver", i+1)
			continue
		}
		if t.Name == "" {
			add("task %d has an empty name: a task needs a name", i+1)
		} else {
			seen[t.Name]++
			if seen[t.Name] == 2 {
				add("task %q is defined %d times: task names must be unique", t.Name, countTasks(tg.Tasks, t.Name))
			}
		}
		if t.Leader {
			leaders = append(leaders, t.Name)
		}
		t.validate(errs, tg, ports)
	}
	if len(leaders) > 1 {
		add("tasks %s are all marked leader: at most one task may be the leader", strings.Join(quoteAll(leaders), ", "))
	}
}

func countTasks(ts []*Task, name string) int {
	n := 0
	for _, t := range ts {
		if t != nil && t.Name == name {
			n++
		}
	}
	return n
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func (tg *TaskGroup) validateReschedule(errs *MultiError, ctx string, j *Job) {
	r := tg.ReschedulePolicy
	if r == nil {
		return
	}
	add := func(format string, a ...any) { errs.Add(fmt.Errorf(ctx+": "+format, a...)) }
	if j.Type == JobTypeSystem {
		if *r != (ReschedulePolicy{}) {
			add("reschedule is not allowed for system jobs: system allocations are never rescheduled")
		}
		return
	}
	if r.Attempts < 0 {
		add("reschedule attempts %d is not allowed: must be zero or more", r.Attempts)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"interval", r.Interval}, {"delay", r.Delay}, {"max_delay", r.MaxDelay}} {
		if d.v < 0 {
			add("reschedule %s %s is not allowed: must not be negative", d.name, d.v)
		}
	}
	if r.Attempts <= 0 && !r.Unlimited {
		// Rescheduling is off; the remaining fields are not used.
		return
	}
	switch r.DelayFunction {
	case RescheduleDelayConstant:
	case RescheduleDelayExponential, RescheduleDelayFibonacci:
		if r.MaxDelay < r.Delay {
			add("reschedule max_delay %s is not allowed: must be at least delay %s for the %s delay function", r.MaxDelay, r.Delay, r.DelayFunction)
		}
	default:
		add("reschedule delay_function %q is not allowed: must be one of %s", r.DelayFunction, allowedDelayFunctions)
	}
	if r.Delay >= 0 && r.Delay < MinRescheduleDelay {
		add("reschedule delay %s is not allowed: must be at least %s", r.Delay, MinRescheduleDelay)
	}
	if !r.Unlimited && r.Interval == 0 {
		add("reschedule interval %s is not allowed: must be greater than zero when attempts is %d", r.Interval, r.Attempts)
	}
}

func validateRestart(errs *MultiError, ctx string, r *RestartPolicy) {
	add := func(format string, a ...any) { errs.Add(fmt.Errorf(ctx+": "+format, a...)) }
	switch r.Mode {
	case RestartPolicyModeDelay, RestartPolicyModeFail:
	default:
		add("restart mode %q is not allowed: must be %q or %q", r.Mode, RestartPolicyModeDelay, RestartPolicyModeFail)
	}
	if r.Attempts < 0 {
		add("restart attempts %d is not allowed: must be zero or more", r.Attempts)
	}
	if r.Interval < 0 {
		add("restart interval %s is not allowed: must not be negative", r.Interval)
	}
	if r.Delay < 0 {
		add("restart delay %s is not allowed: must not be negative", r.Delay)
	}
	if r.Attempts > 0 && r.Delay > 0 && r.Interval >= 0 && time.Duration(r.Attempts)*r.Delay > r.Interval {
		add("restart interval %s is not allowed: must be at least attempts x delay (%d x %s)", r.Interval, r.Attempts, r.Delay)
	}
}

func validateUpdate(errs *MultiError, ctx string, u *UpdateStrategy) {
	add := func(format string, a ...any) { errs.Add(fmt.Errorf(ctx+": "+format, a...)) }
	switch u.HealthCheck {
	case "checks", "task_states", "manual":
	default:
		add("update health_check %q is not allowed: must be one of checks, task_states, manual", u.HealthCheck)
	}
	if u.MaxParallel < 0 {
		add("update max_parallel %d is not allowed: must be zero or more", u.MaxParallel)
	}
	if u.Canary < 0 {
		add("update canary %d is not allowed: must be zero or more", u.Canary)
	}
	if u.MaxParallel == 0 {
		// Rolling updates are off; the timings are not used.
		return
	}
	if u.Stagger < 0 {
		add("update stagger %s is not allowed: must not be negative", u.Stagger)
	}
	if u.MinHealthyTime < 0 {
		add("update min_healthy_time %s is not allowed: must not be negative", u.MinHealthyTime)
	}
	if u.HealthyDeadline <= 0 {
		add("update healthy_deadline %s is not allowed: must be greater than zero", u.HealthyDeadline)
	} else if u.MinHealthyTime >= u.HealthyDeadline {
		add("update healthy_deadline %s is not allowed: must be greater than min_healthy_time %s", u.HealthyDeadline, u.MinHealthyTime)
	}
	if u.ProgressDeadline < 0 {
		add("update progress_deadline %s is not allowed: must not be negative", u.ProgressDeadline)
	} else if u.ProgressDeadline != 0 && u.ProgressDeadline < u.HealthyDeadline {
		add("update progress_deadline %s is not allowed: must be 0 or at least healthy_deadline %s", u.ProgressDeadline, u.HealthyDeadline)
	}
}

func validateMigrate(errs *MultiError, ctx string, m *MigrateStrategy) {
	add := func(format string, a ...any) { errs.Add(fmt.Errorf(ctx+": "+format, a...)) }
	switch m.HealthCheck {
	case "checks", "task_states":
	default:
		add("migrate health_check %q is not allowed: must be checks or task_states", m.HealthCheck)
	}
	if m.MaxParallel < 0 {
		add("migrate max_parallel %d is not allowed: must be zero or more", m.MaxParallel)
	}
	if m.MinHealthyTime < 0 {
		add("migrate min_healthy_time %s is not allowed: must not be negative", m.MinHealthyTime)
	}
	if m.HealthyDeadline <= m.MinHealthyTime {
		add("migrate healthy_deadline %s is not allowed: must be greater than min_healthy_time %s", m.HealthyDeadline, m.MinHealthyTime)
	}
}

// validateNetwork checks a network's ports; ports collects the labels seen
// in the group so that duplicates across networks and tasks are caught.
func validateNetwork(errs *MultiError, ctx string, n *NetworkResource, ports map[string]bool) {
	if n == nil {
		return
	}
	if tooMany(errs, ctx, "network ports", len(n.ReservedPorts)+len(n.DynamicPorts), MaxPortsPerNetwork) {
		return
	}
	add := func(format string, a ...any) { errs.Add(fmt.Errorf(ctx+": "+format, a...)) }
	switch name, cni := strings.CutPrefix(n.Mode, "cni/"); {
	case n.Mode == "", n.Mode == NetworkModeHost, n.Mode == "bridge", n.Mode == "none", cni && name != "":
	default:
		add("network mode %q is not allowed: must be host, bridge, none or cni/<name>", n.Mode)
	}
	check := func(p Port, static bool) {
		switch {
		case p.Label == "":
			add("port with value %d has an empty label: a port needs a label", p.Value)
		case ports[p.Label]:
			add("port %q is defined more than once: port labels must be unique in a group", p.Label)
		}
		ports[p.Label] = true
		if p.Value < 0 || p.Value > MaxPort || (static && p.Value == 0) {
			lo := 0
			if static {
				lo = 1
			}
			add("port %q static value %d is not allowed: must be between %d and %d", p.Label, p.Value, lo, MaxPort)
		}
		if p.To < -1 || p.To > MaxPort {
			add("port %q to %d is not allowed: must be between -1 and %d", p.Label, p.To, MaxPort)
		}
		if p.IgnoreCollision && !static {
			add("port %q ignore_collision is not allowed on a dynamic port: only a static port may be shared", p.Label)
		}
	}
	for _, p := range n.ReservedPorts {
		check(p, true)
	}
	for _, p := range n.DynamicPorts {
		check(p, false)
	}
}

func validateConstraints(errs *MultiError, ctx string, cs []*Constraint, taskLevel bool) {
	if tooMany(errs, ctx, "constraints", len(cs), MaxRulesPerBlock) {
		return
	}
	for _, c := range cs {
		if c == nil {
			continue
		}
		if err := validateConstraint(c, taskLevel); err != nil {
			errs.Add(fmt.Errorf("%s: constraint %q: %w", ctx, describeTargets(c.LTarget, c.Operand, c.RTarget), err))
		}
	}
}

func validateAffinities(errs *MultiError, ctx string, as []*Affinity) {
	if tooMany(errs, ctx, "affinities", len(as), MaxRulesPerBlock) {
		return
	}
	for _, a := range as {
		if a == nil {
			continue
		}
		err := validateAffinity(a)
		if err == nil {
			continue
		}
		desc := describeTargets(a.LTarget, a.Operand, a.RTarget)
		for _, e := range err.(*MultiError).Errors {
			errs.Add(fmt.Errorf("%s: affinity %q: %w", ctx, desc, e))
		}
	}
}

func validateSpreads(errs *MultiError, ctx string, ss []*Spread) {
	if tooMany(errs, ctx, "spreads", len(ss), MaxRulesPerBlock) {
		return
	}
	for _, s := range ss {
		if s == nil {
			continue
		}
		if s.Attribute == "" {
			errs.Add(fmt.Errorf("%s: spread attribute must not be empty", ctx))
		}
		if s.Weight <= 0 || s.Weight > 100 {
			errs.Add(fmt.Errorf("%s: spread %q weight %d is not allowed: must be between 1 and 100", ctx, s.Attribute, s.Weight))
		}
		if tooMany(errs, fmt.Sprintf("%s: spread %q", ctx, s.Attribute), "targets", len(s.SpreadTarget), MaxRulesPerBlock) {
			continue
		}
		sum := 0
		values := make(map[string]bool, len(s.SpreadTarget))
		for _, t := range s.SpreadTarget {
			if t == nil {
				continue
			}
			if values[t.Value] {
				errs.Add(fmt.Errorf("%s: spread %q target %q is defined more than once: target values must be unique", ctx, s.Attribute, t.Value))
			}
			values[t.Value] = true
			sum += int(t.Percent)
		}
		if sum > 100 {
			errs.Add(fmt.Errorf("%s: spread %q target percentages add up to %d: must be at most 100", ctx, s.Attribute, sum))
		}
	}
}

func (t *Task) validate(errs *MultiError, tg *TaskGroup, ports map[string]bool) {
	ctx := fmt.Sprintf("Task group %q, task %q", tg.Name, t.Name)
	add := func(format string, a ...any) { errs.Add(fmt.Errorf(ctx+": "+format, a...)) }

	if strings.Contains(t.Name, "/") {
		add("name is not allowed: must not contain \"/\"")
	}
	if t.Driver == "" {
		add("driver must not be empty")
	}
	if t.KillTimeout < 0 {
		add("kill_timeout %s is not allowed: must not be negative", t.KillTimeout)
	}
	if t.ShutdownDelay < 0 {
		add("shutdown_delay %s is not allowed: must not be negative", t.ShutdownDelay)
	}
	tooMany(errs, ctx, "env keys", len(t.Env), MaxMapKeys)
	tooMany(errs, ctx, "meta keys", len(t.Meta), MaxMapKeys)
	tooDeep(errs, ctx, "config", t.Config)
	if r := t.Resources; r == nil {
		add("resources must be set")
	} else {
		switch {
		case r.Cores < 0:
			add("resources cores %d is not allowed: must not be negative", r.Cores)
		case r.Cores > 0 && r.CPU > 0:
			add("resources cpu %d is not allowed together with cores %d: set only one", r.CPU, r.Cores)
		case r.Cores == 0 && r.CPU < MinResourcesCPU:
			add("resources cpu %d is not allowed: must be at least %d MHz, or set cores", r.CPU, MinResourcesCPU)
		}
		if r.MemoryMB < MinResourcesMemoryMB {
			add("resources memory %d is not allowed: must be at least %d MB", r.MemoryMB, MinResourcesMemoryMB)
		}
		if r.MemoryMaxMB != 0 && r.MemoryMaxMB < r.MemoryMB {
			add("resources memory_max %d is not allowed: must be 0 or at least memory %d", r.MemoryMaxMB, r.MemoryMB)
		}
		if r.DiskMB < 0 {
			add("resources disk %d is not allowed: must not be negative", r.DiskMB)
		}
		for _, n := range r.Networks {
			validateNetwork(errs, ctx, n, ports)
		}
	}
	if l := t.LogConfig; l != nil && !l.Disabled {
		if l.MaxFiles < 1 {
			add("logs max_files %d is not allowed: must be at least 1", l.MaxFiles)
		}
		if l.MaxFileSizeMB < 1 {
			add("logs max_file_size %d is not allowed: must be at least 1 MB", l.MaxFileSizeMB)
		}
		// Each task's logs are held to the group's disk on their own, as
		// Nomad checks them: the tasks' logs are not added up.
		if d := tg.EphemeralDisk; d != nil && d.SizeMB >= MinEphemeralDiskMB && l.MaxFiles*l.MaxFileSizeMB >= d.SizeMB {
			add("log storage of %d MB (max_files x max_file_size) is not allowed: must be less than ephemeral_disk size %d MB", l.MaxFiles*l.MaxFileSizeMB, d.SizeMB)
		}
	}
	if l := t.Lifecycle; l != nil {
		switch l.Hook {
		case TaskLifecycleHookPrestart, TaskLifecycleHookPoststart, TaskLifecycleHookPoststop:
		default:
			add("lifecycle hook %q is not allowed: must be one of %s", l.Hook, allowedLifecycleHooks)
		}
	}
	// A task restart policy copied from the group was checked with the group.
	if r := t.RestartPolicy; r != nil && (tg.RestartPolicy == nil || !reflect.DeepEqual(*r, *tg.RestartPolicy)) {
		validateRestart(errs, ctx, r)
	}
	validateConstraints(errs, ctx, t.Constraints, true)
	validateAffinities(errs, ctx, t.Affinities)
	t.validateServices(errs, ctx, ports)
	t.validateArtifacts(errs, ctx)
	t.validateTemplates(errs, ctx)
	if !tooMany(errs, ctx, "volume mounts", len(t.VolumeMounts), MaxListEntries) {
		validateVolumeMounts(errs, ctx, t.VolumeMounts, tg.Volumes)
	}
	if p := t.DispatchPayload; p != nil && escapesTaskDir(p.File) {
		add("dispatch_payload file %q is not allowed: must stay inside the task directory", p.File)
	}
}

func (t *Task) validateArtifacts(errs *MultiError, ctx string) {
	if tooMany(errs, ctx, "artifacts", len(t.Artifacts), MaxListEntries) {
		return
	}
	add := func(format string, a ...any) { errs.Add(fmt.Errorf(ctx+": "+format, a...)) }
	for i, a := range t.Artifacts {
		if a == nil {
			continue
		}
		if a.GetterSource == "" {
			add("artifact %d source must not be empty", i+1)
		}
		switch a.GetterMode {
		case "", "any", "file", "dir":
		default:
			add("artifact %d mode %q is not allowed: must be one of any, file, dir", i+1, a.GetterMode)
		}
		if escapesAllocDir(a.RelativeDest) {
			add("artifact %d destination %q is not allowed: must stay inside the allocation directory (the task directory, or ../alloc for the shared one)", i+1, a.RelativeDest)
		}
		if g := artifactGetter(a.GetterSource); g != "" && !slices.Contains(ArtifactGetters, g) {
			add("artifact %d source %q is not supported by nomadq: %q sources cannot be fetched; allowed are %s",
				i+1, a.GetterSource, g, strings.Join(ArtifactGetters, ", "))
		}
	}
}

func (t *Task) validateTemplates(errs *MultiError, ctx string) {
	if tooMany(errs, ctx, "templates", len(t.Templates), MaxListEntries) {
		return
	}
	add := func(format string, a ...any) { errs.Add(fmt.Errorf(ctx+": "+format, a...)) }
	for i, tmpl := range t.Templates {
		if tmpl == nil {
			continue
		}
		if tmpl.SourcePath == "" && tmpl.EmbeddedTmpl == "" {
			add("template %d must set source or data, got neither", i+1)
		}
		if tmpl.SourcePath != "" && tmpl.EmbeddedTmpl != "" {
			add("template %d sets both source %q and data: set one of them", i+1, tmpl.SourcePath)
		}
		if escapesTaskDir(tmpl.SourcePath) {
			add("template %d source %q is not allowed: must stay inside the task directory", i+1, tmpl.SourcePath)
		}
		if tmpl.Perms != "" {
			if _, err := strconv.ParseUint(tmpl.Perms, 8, 12); err != nil {
				add("template %d perms %q is not allowed: must be an octal file mode such as \"0644\"", i+1, tmpl.Perms)
			}
		}
		if tmpl.DestPath == "" {
			add("template %d destination must not be empty", i+1)
		} else if escapesTaskDir(tmpl.DestPath) {
			add("template %d destination %q is not allowed: must stay inside the task directory", i+1, tmpl.DestPath)
		}
		switch tmpl.ChangeMode {
		case TemplateChangeModeNoop, TemplateChangeModeRestart:
		case TemplateChangeModeSignal:
			if tmpl.ChangeSignal == "" {
				add("template %d change_signal must be set when change_mode is \"signal\"", i+1)
			}
			if tmpl.Envvars {
				add("template %d change_mode \"signal\" is not allowed with env = true: a signal cannot change a running task's environment", i+1)
			}
		case TemplateChangeModeScript:
			if tmpl.ChangeScript == nil || tmpl.ChangeScript.Command == "" {
				add("template %d change_script command must be set when change_mode is \"script\"", i+1)
			}
		default:
			add("template %d change_mode %q is not allowed: must be one of noop, restart, signal, script", i+1, tmpl.ChangeMode)
		}
		if tmpl.Splay < 0 {
			add("template %d splay %s is not allowed: must not be negative", i+1, tmpl.Splay)
		}
	}
}

// ArtifactGetters are the kinds of artifact source the client fetches.
// go-getter also knows s3, gcs, hg and smb; those need credentials or
// tools the client does not manage, so they are refused at registration.
var ArtifactGetters = []string{"http", "https", "file", "git"}

// artifactGetter returns the getter an artifact source names explicitly,
// by a forced prefix ("git::https://...") or a URL scheme, lower-cased;
// "" when it names none (go-getter then detects it: github.com/...,
// relative paths).
func artifactGetter(src string) string {
	if i := strings.Index(src, "::"); i > 0 && !strings.ContainsAny(src[:i], "/:") {
		return strings.ToLower(src[:i])
	}
	if i := strings.Index(src, "://"); i > 0 && !strings.ContainsAny(src[:i], "/.") {
		return strings.ToLower(src[:i])
	}
	return ""
}

// escapesTaskDir reports whether a relative destination climbs out of the
// task directory.
func escapesTaskDir(dest string) bool {
	if dest == "" {
		return false
	}
	c := path.Clean(dest)
	return c == ".." || strings.HasPrefix(c, "../")
}

// escapesAllocDir reports whether a destination relative to a task's
// directory climbs out of the allocation directory, its parent. Nomad
// allows the rest: "../alloc/x" is the directory its tasks share. An
// absolute destination is taken as relative to the task directory, as
// Nomad's client joins it.
func escapesAllocDir(dest string) bool {
	c := path.Join("task", dest)
	return c == ".." || strings.HasPrefix(c, "../")
}

// ValidateMaxRunDuration checks a group's max_run_duration for a job of
// the given type: only batch and sysbatch jobs may set it, and it must be
// greater than zero. The job file parser uses it too, to point at the
// attribute.
func ValidateMaxRunDuration(jobType string, d time.Duration) error {
	switch {
	case jobType != JobTypeBatch && jobType != JobTypeSysBatch:
		return fmt.Errorf("max_run_duration is only allowed for batch and sysbatch jobs, not %s jobs", jobType)
	case d <= 0:
		return fmt.Errorf("max_run_duration must be greater than zero, got %s", d)
	case d < MinMaxRunDuration:
		return tooShortDuration("max_run_duration", d)
	}
	return nil
}
