package structs

import (
	"maps"
	"reflect"
	"slices"
)

// Copy returns a deep copy of the job: groups, tasks, maps, slices and
// pointed-to values are all new, so the copy can be changed freely.
func (j *Job) Copy() *Job {
	if j == nil {
		return nil
	}
	c := *j
	c.Datacenters = slices.Clone(j.Datacenters)
	c.Constraints = copyConstraints(j.Constraints)
	c.Affinities = copyAffinities(j.Affinities)
	c.Spreads = copySpreads(j.Spreads)
	if j.TaskGroups != nil {
		c.TaskGroups = make([]*TaskGroup, len(j.TaskGroups))
		for i, tg := range j.TaskGroups {
			c.TaskGroups[i] = tg.Copy()
		}
	}
	if p := j.Periodic; p != nil {
		pc := *p
		pc.Specs = slices.Clone(p.Specs)
		c.Periodic = &pc
	}
	if p := j.ParameterizedJob; p != nil {
		pc := *p
		pc.MetaRequired = slices.Clone(p.MetaRequired)
		pc.MetaOptional = slices.Clone(p.MetaOptional)
		c.ParameterizedJob = &pc
	}
	c.Payload = slices.Clone(j.Payload)
	c.Reschedule = clonePtr(j.Reschedule)
	c.Migrate = clonePtr(j.Migrate)
	c.Meta = maps.Clone(j.Meta)
	return &c
}

// Copy returns a deep copy of the task group.
func (tg *TaskGroup) Copy() *TaskGroup {
	if tg == nil {
		return nil
	}
	c := *tg
	c.Constraints = copyConstraints(tg.Constraints)
	c.Affinities = copyAffinities(tg.Affinities)
	c.Spreads = copySpreads(tg.Spreads)
	if tg.Tasks != nil {
		c.Tasks = make([]*Task, len(tg.Tasks))
		for i, t := range tg.Tasks {
			c.Tasks[i] = t.Copy()
		}
	}
	c.RestartPolicy = clonePtr(tg.RestartPolicy)
	c.ReschedulePolicy = clonePtr(tg.ReschedulePolicy)
	c.EphemeralDisk = clonePtr(tg.EphemeralDisk)
	c.Update = clonePtr(tg.Update)
	c.Migrate = clonePtr(tg.Migrate)
	c.Networks = copyNetworks(tg.Networks)
	c.Services = copyServices(tg.Services)
	c.Meta = maps.Clone(tg.Meta)
	c.ShutdownDelay = clonePtr(tg.ShutdownDelay)
	c.MaxRunDuration = clonePtr(tg.MaxRunDuration)
	c.MaxRunDurationWarning = tg.MaxRunDurationWarning.Copy()
	c.Scaling = tg.Scaling.Copy()
	if tg.Volumes != nil {
		c.Volumes = make(map[string]*VolumeRequest, len(tg.Volumes))
		for k, v := range tg.Volumes {
			c.Volumes[k] = clonePtr(v)
		}
	}
	return &c
}

// Copy returns a deep copy of the task, including its driver Config.
func (t *Task) Copy() *Task {
	if t == nil {
		return nil
	}
	c := *t
	c.Config = CopyConfig(t.Config)
	c.Env = maps.Clone(t.Env)
	c.Services = copyServices(t.Services)
	c.Constraints = copyConstraints(t.Constraints)
	c.Affinities = copyAffinities(t.Affinities)
	c.Resources = t.Resources.Copy()
	c.RestartPolicy = clonePtr(t.RestartPolicy)
	c.DispatchPayload = clonePtr(t.DispatchPayload)
	c.Lifecycle = clonePtr(t.Lifecycle)
	c.Meta = maps.Clone(t.Meta)
	c.LogConfig = clonePtr(t.LogConfig)
	c.Identity = t.Identity.Copy()
	c.VolumeMounts = copyEach(t.VolumeMounts, nil)
	if t.Artifacts != nil {
		c.Artifacts = make([]*TaskArtifact, len(t.Artifacts))
		for i, a := range t.Artifacts {
			if a != nil {
				ac := *a
				ac.GetterOptions = maps.Clone(a.GetterOptions)
				ac.GetterHeaders = maps.Clone(a.GetterHeaders)
				c.Artifacts[i] = &ac
			}
		}
	}
	if t.Templates != nil {
		c.Templates = make([]*Template, len(t.Templates))
		for i, tmpl := range t.Templates {
			c.Templates[i] = tmpl.Copy()
		}
	}
	return &c
}

// Copy returns a deep copy of the template.
func (t *Template) Copy() *Template {
	if t == nil {
		return nil
	}
	c := *t
	if t.ChangeScript != nil {
		cs := *t.ChangeScript
		cs.Args = slices.Clone(t.ChangeScript.Args)
		c.ChangeScript = &cs
	}
	c.Uid = clonePtr(t.Uid)
	c.Gid = clonePtr(t.Gid)
	if t.Wait != nil {
		c.Wait = &WaitConfig{Min: clonePtr(t.Wait.Min), Max: clonePtr(t.Wait.Max)}
	}
	return &c
}

// Copy returns a deep copy of the resources.
func (r *Resources) Copy() *Resources {
	if r == nil {
		return nil
	}
	c := *r
	c.Networks = copyNetworks(r.Networks)
	return &c
}

// Copy returns a deep copy of the network.
func (n *NetworkResource) Copy() *NetworkResource {
	if n == nil {
		return nil
	}
	c := *n
	c.ReservedPorts = slices.Clone(n.ReservedPorts)
	c.DynamicPorts = slices.Clone(n.DynamicPorts)
	if n.DNS != nil {
		c.DNS = &DNSConfig{
			Servers:  slices.Clone(n.DNS.Servers),
			Searches: slices.Clone(n.DNS.Searches),
			Options:  slices.Clone(n.DNS.Options),
		}
	}
	if n.CNI != nil {
		c.CNI = &CNIConfig{Args: maps.Clone(n.CNI.Args)}
	}
	return &c
}

// Copy returns a deep copy of the service.
func (s *Service) Copy() *Service {
	if s == nil {
		return nil
	}
	c := *s
	c.Tags = slices.Clone(s.Tags)
	c.CanaryTags = slices.Clone(s.CanaryTags)
	c.Meta = maps.Clone(s.Meta)
	c.CanaryMeta = maps.Clone(s.CanaryMeta)
	c.TaggedAddresses = maps.Clone(s.TaggedAddresses)
	if s.CheckRestart != nil {
		cr := *s.CheckRestart
		c.CheckRestart = &cr
	}
	if s.Checks != nil {
		c.Checks = make([]*ServiceCheck, len(s.Checks))
		for i, ck := range s.Checks {
			c.Checks[i] = ck.Copy()
		}
	}
	return &c
}

func copyNetworks(in []*NetworkResource) []*NetworkResource {
	if in == nil {
		return nil
	}
	out := make([]*NetworkResource, len(in))
	for i, n := range in {
		out[i] = n.Copy()
	}
	return out
}

func copyServices(in []*Service) []*Service {
	if in == nil {
		return nil
	}
	out := make([]*Service, len(in))
	for i, s := range in {
		out[i] = s.Copy()
	}
	return out
}

func copyConstraints(in []*Constraint) []*Constraint { return copyEach(in, nil) }

func copyAffinities(in []*Affinity) []*Affinity { return copyEach(in, nil) }

func copySpreads(in []*Spread) []*Spread {
	return copyEach(in, func(s *Spread) { s.SpreadTarget = copyEach(s.SpreadTarget, nil) })
}

// Copy returns a deep copy of the allocation, except for Job: the copy
// points to the same *Job, because jobs in the state store are immutable
// and an allocation's job is shared by all allocations of a job version.
// Callers that change the job must replace a.Job with a.Job.Copy().
func (a *Allocation) Copy() *Allocation {
	if a == nil {
		return nil
	}
	c := *a
	c.Resources = a.Resources.Copy()
	if a.TaskResources != nil {
		c.TaskResources = make(map[string]*Resources, len(a.TaskResources))
		for k, r := range a.TaskResources {
			c.TaskResources[k] = r.Copy()
		}
	}
	c.AllocatedResources = a.AllocatedResources.Copy()
	c.Metrics = a.Metrics.Copy()
	c.DesiredTransition = DesiredTransition{
		Migrate:         clonePtr(a.DesiredTransition.Migrate),
		Reschedule:      clonePtr(a.DesiredTransition.Reschedule),
		ForceReschedule: clonePtr(a.DesiredTransition.ForceReschedule),
		NoShutdownDelay: clonePtr(a.DesiredTransition.NoShutdownDelay),
	}
	if a.NetworkStatus != nil {
		ns := *a.NetworkStatus
		if ns.DNS != nil {
			d := *ns.DNS
			d.Servers = slices.Clone(d.Servers)
			d.Searches = slices.Clone(d.Searches)
			d.Options = slices.Clone(d.Options)
			ns.DNS = &d
		}
		c.NetworkStatus = &ns
	}
	if a.TaskStates != nil {
		c.TaskStates = make(map[string]*TaskState, len(a.TaskStates))
		for k, ts := range a.TaskStates {
			c.TaskStates[k] = ts.Copy()
		}
	}
	if a.RescheduleTracker != nil {
		c.RescheduleTracker = &RescheduleTracker{Events: copyEach(a.RescheduleTracker.Events, nil)}
	}
	c.SignedIdentities = maps.Clone(a.SignedIdentities)
	return &c
}

// Copy returns a deep copy of the allocated resources.
func (a *AllocatedResources) Copy() *AllocatedResources {
	if a == nil {
		return nil
	}
	c := *a
	if a.Tasks != nil {
		c.Tasks = make(map[string]*AllocatedTaskResources, len(a.Tasks))
		for k, t := range a.Tasks {
			if t == nil {
				c.Tasks[k] = nil
				continue
			}
			tc := *t
			tc.Cpu.ReservedCores = slices.Clone(t.Cpu.ReservedCores)
			tc.Networks = copyNetworks(t.Networks)
			c.Tasks[k] = &tc
		}
	}
	c.Shared.Networks = copyNetworks(a.Shared.Networks)
	c.Shared.Ports = slices.Clone(a.Shared.Ports)
	return &c
}

// Copy returns a deep copy of the task state and its events.
func (ts *TaskState) Copy() *TaskState {
	if ts == nil {
		return nil
	}
	c := *ts
	c.Events = copyEach(ts.Events, func(e *TaskEvent) {
		e.Details = maps.Clone(e.Details)
	})
	return &c
}

// copyEach copies a slice of pointers: each non-nil element is copied and
// then deepen, when set, replaces what the copy still shares with the
// original. nil stays nil, a nil element stays nil.
func copyEach[T any](in []*T, deepen func(*T)) []*T {
	if in == nil {
		return nil
	}
	out := make([]*T, len(in))
	for i, e := range in {
		if e == nil {
			continue
		}
		ec := *e
		if deepen != nil {
			deepen(&ec)
		}
		out[i] = &ec
	}
	return out
}

// SpecChanged reports whether other differs from j in anything the user
// specified. It ignores the fields the server manages (Status,
// StatusDescription, Stable, Version, SubmitTime and the Raft indexes), so
// a re-registration of an unchanged job is recognised and needs no new
// version or evaluation.
//
// Everything else is compared with reflect.DeepEqual semantics (a nil and
// an empty map differ; both sides are expected to be canonicalized), except
// the driver Config, whose numbers compare by value whatever their Go type:
// a stored job has been through msgpack (integers come back as int64)
// while a newly submitted one has not.
func (j *Job) SpecChanged(other *Job) bool {
	if j == nil || other == nil {
		return j != other
	}
	a, b := j.specView(), other.specView()
	if !reflect.DeepEqual(a, b) {
		return true
	}
	for gi, tg := range j.TaskGroups {
		if tg == nil {
			continue
		}
		if tg.Scaling != nil && !configEqual(map[string]any(tg.Scaling.Policy), map[string]any(other.TaskGroups[gi].Scaling.Policy)) {
			return true
		}
		for ti, t := range tg.Tasks {
			if t == nil {
				continue
			}
			if !configEqual(t.Config, other.TaskGroups[gi].Tasks[ti].Config) {
				return true
			}
		}
	}
	return false
}

// specView returns a shallow copy of the job tree with the server-managed
// fields and the task Configs zeroed. Only the top-level job, the group and
// task slices and the tasks are new; everything else is shared with j.
func (j *Job) specView() *Job {
	v := *j
	v.Status = ""
	v.StatusDescription = ""
	v.Stable = false
	v.Version = 0
	v.SubmitTime = 0
	v.CreateIndex = 0
	v.ModifyIndex = 0
	v.JobModifyIndex = 0
	if j.TaskGroups != nil {
		v.TaskGroups = make([]*TaskGroup, len(j.TaskGroups))
		for i, tg := range j.TaskGroups {
			if tg == nil {
				continue
			}
			tgv := *tg
			if tg.Scaling != nil {
				// The ID and target are the server's; the policy map is
				// compared like task configs (numbers by value).
				sv := *tg.Scaling
				sv.ID, sv.Target, sv.Policy, sv.CreateIndex, sv.ModifyIndex = "", nil, nil, 0, 0
				tgv.Scaling = &sv
			}
			if tg.Tasks != nil {
				tgv.Tasks = make([]*Task, len(tg.Tasks))
				for k, t := range tg.Tasks {
					if t == nil {
						continue
					}
					tv := *t
					tv.Config = nil
					tgv.Tasks[k] = &tv
				}
			}
			v.TaskGroups[i] = &tgv
		}
	}
	return &v
}

// configEqual compares free-form configuration values: maps and slices
// element by element, numbers by value across integer and float types,
// and anything else with reflect.DeepEqual.
func configEqual(a, b any) bool {
	if an, ok := toFloat(a); ok {
		bn, ok := toFloat(b)
		return ok && an == bn
	}
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	if !ra.IsValid() || !rb.IsValid() {
		return ra.IsValid() == rb.IsValid()
	}
	switch {
	case ra.Kind() == reflect.Map && rb.Kind() == reflect.Map:
		if ra.IsNil() != rb.IsNil() || ra.Len() != rb.Len() {
			return false
		}
		if ra.Type().Key() != rb.Type().Key() {
			return false
		}
		it := ra.MapRange()
		for it.Next() {
			bv := rb.MapIndex(it.Key())
			if !bv.IsValid() || !configEqual(it.Value().Interface(), bv.Interface()) {
				return false
			}
		}
		return true
	case ra.Kind() == reflect.Slice && rb.Kind() == reflect.Slice:
		if ra.Len() != rb.Len() {
			return false
		}
		for i := range ra.Len() {
			if !configEqual(ra.Index(i).Interface(), rb.Index(i).Interface()) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
