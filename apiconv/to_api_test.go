package apiconv

import (
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// jobToAPI converts an internal job to the wire type of the
// official client. The result has the shape of a canonicalized api.Job:
// every pointer that api.Job.Canonicalize sets is non-nil, and the fields
// nomadq does not model (see Job) are nil or empty, except
// ConsulNamespace, VaultNamespace and NomadTokenID, which are "".
func jobToAPI(j *structs.Job) *api.Job {
	if j == nil {
		return nil
	}
	out := &api.Job{
		Region:                   new(j.Region),
		Namespace:                new(j.Namespace),
		ID:                       new(j.ID),
		Name:                     new(j.Name),
		Type:                     new(j.Type),
		Priority:                 new(j.Priority),
		AllAtOnce:                new(j.AllAtOnce),
		Datacenters:              slices.Clone(j.Datacenters),
		NodePool:                 new(j.NodePool),
		Constraints:              constraintsToAPI(j.Constraints),
		Affinities:               affinitiesToAPI(j.Affinities),
		Spreads:                  spreadsToAPI(j.Spreads),
		Periodic:                 periodicToAPI(j.Periodic),
		ParameterizedJob:         parameterizedToAPI(j.ParameterizedJob),
		Reschedule:               rescheduleToAPI(j.Reschedule),
		Migrate:                  migrateToAPI(j.Migrate),
		Meta:                     maps.Clone(j.Meta),
		Stop:                     new(j.Stop),
		ParentID:                 new(j.ParentID),
		Dispatched:               j.Dispatched,
		DispatchIdempotencyToken: nonZero(j.DispatchIdempotencyToken),
		Payload:                  slices.Clone(j.Payload),
		ConsulNamespace:          new(""),
		VaultNamespace:           new(""),
		NomadTokenID:             new(""),
		Status:                   new(j.Status),
		StatusDescription:        new(j.StatusDescription),
		Stable:                   new(j.Stable),
		Version:                  new(j.Version),
		SubmitTime:               nonZero(j.SubmitTime),
		CreateIndex:              new(j.CreateIndex),
		ModifyIndex:              new(j.ModifyIndex),
		JobModifyIndex:           new(j.JobModifyIndex),
	}
	if j.Update != (structs.UpdateStrategy{}) {
		out.Update = updateToAPI(&j.Update)
	}
	if j.TaskGroups != nil {
		out.TaskGroups = make([]*api.TaskGroup, len(j.TaskGroups))
		for i, tg := range j.TaskGroups {
			out.TaskGroups[i] = taskGroupToAPI(tg)
		}
	}
	return out
}

func taskGroupToAPI(tg *structs.TaskGroup) *api.TaskGroup {
	if tg == nil {
		return nil
	}
	out := &api.TaskGroup{
		Name:             new(tg.Name),
		Count:            new(tg.Count),
		Constraints:      constraintsToAPI(tg.Constraints),
		Affinities:       affinitiesToAPI(tg.Affinities),
		Spreads:          spreadsToAPI(tg.Spreads),
		RestartPolicy:    restartToAPI(tg.RestartPolicy),
		ReschedulePolicy: rescheduleToAPI(tg.ReschedulePolicy),
		Update:           updateToAPI(tg.Update),
		Migrate:          migrateToAPI(tg.Migrate),
		Networks:         networksToAPI(tg.Networks),
		Services:         servicesToAPI(tg.Services),
		Meta:             maps.Clone(tg.Meta),
		ShutdownDelay:    clonePtr(tg.ShutdownDelay),
		MaxRunDuration:   clonePtr(tg.MaxRunDuration),
		Volumes:          volumesToAPI(tg.Volumes),
	}
	if p := tg.Scaling; p != nil {
		out.Scaling = &api.ScalingPolicy{Min: new(p.Min), Max: new(p.Max), Enabled: new(p.Enabled), Type: p.Type,
			Policy: maps.Clone(p.Policy), ID: p.ID, Target: maps.Clone(p.Target), CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
	}
	if d := tg.EphemeralDisk; d != nil {
		out.EphemeralDisk = &api.EphemeralDisk{
			Sticky:  new(d.Sticky),
			Migrate: new(d.Migrate),
			SizeMB:  new(d.SizeMB),
		}
	}
	if tg.Tasks != nil {
		out.Tasks = make([]*api.Task, len(tg.Tasks))
		for i, t := range tg.Tasks {
			out.Tasks[i] = taskToAPI(t)
		}
	}
	return out
}

func taskToAPI(t *structs.Task) *api.Task {
	if t == nil {
		return nil
	}
	out := &api.Task{
		Name:          t.Name,
		Driver:        t.Driver,
		User:          t.User,
		Config:        structs.CopyConfig(t.Config),
		Env:           maps.Clone(t.Env),
		Services:      servicesToAPI(t.Services),
		Constraints:   constraintsToAPI(t.Constraints),
		Affinities:    affinitiesToAPI(t.Affinities),
		RestartPolicy: restartToAPI(t.RestartPolicy),
		Meta:          maps.Clone(t.Meta),
		KillTimeout:   new(t.KillTimeout),
		Leader:        t.Leader,
		ShutdownDelay: t.ShutdownDelay,
		KillSignal:    t.KillSignal,
		Kind:          t.Kind,
		Identity:      workloadIdentityToAPI(t.Identity),
		VolumeMounts:  volumeMountsToAPI(t.VolumeMounts),
	}
	if r := t.Resources; r != nil {
		out.Resources = &api.Resources{
			CPU:         new(r.CPU),
			Cores:       new(r.Cores),
			MemoryMB:    new(r.MemoryMB),
			MemoryMaxMB: nonZero(r.MemoryMaxMB),
			DiskMB:      nonZero(r.DiskMB),
			Networks:    networksToAPI(r.Networks),
		}
	}
	if p := t.DispatchPayload; p != nil {
		out.DispatchPayload = &api.DispatchPayloadConfig{File: p.File}
	}
	if l := t.Lifecycle; l != nil {
		out.Lifecycle = &api.TaskLifecycle{Hook: l.Hook, Sidecar: l.Sidecar}
	}
	if l := t.LogConfig; l != nil {
		out.LogConfig = &api.LogConfig{
			MaxFiles:      new(l.MaxFiles),
			MaxFileSizeMB: new(l.MaxFileSizeMB),
			Disabled:      new(l.Disabled),
		}
	}
	if t.Artifacts != nil {
		out.Artifacts = make([]*api.TaskArtifact, len(t.Artifacts))
		for i, a := range t.Artifacts {
			out.Artifacts[i] = artifactToAPI(a)
		}
	}
	if t.Templates != nil {
		out.Templates = make([]*api.Template, len(t.Templates))
		for i, tmpl := range t.Templates {
			out.Templates[i] = templateToAPI(tmpl)
		}
	}
	return out
}

func artifactToAPI(a *structs.TaskArtifact) *api.TaskArtifact {
	if a == nil {
		return nil
	}
	return &api.TaskArtifact{
		GetterSource:   new(a.GetterSource),
		GetterOptions:  maps.Clone(a.GetterOptions),
		GetterHeaders:  maps.Clone(a.GetterHeaders),
		GetterMode:     new(a.GetterMode),
		GetterInsecure: new(a.GetterInsecure),
		RelativeDest:   new(a.RelativeDest),
		Chown:          a.Chown,
	}
}

func templateToAPI(t *structs.Template) *api.Template {
	if t == nil {
		return nil
	}
	out := &api.Template{
		SourcePath:    new(t.SourcePath),
		DestPath:      new(t.DestPath),
		EmbeddedTmpl:  new(t.EmbeddedTmpl),
		ChangeMode:    new(t.ChangeMode),
		ChangeSignal:  new(t.ChangeSignal),
		Once:          new(t.Once),
		Splay:         new(t.Splay),
		Perms:         new(t.Perms),
		Uid:           clonePtr(t.Uid),
		Gid:           clonePtr(t.Gid),
		LeftDelim:     new(t.LeftDelim),
		RightDelim:    new(t.RightDelim),
		Envvars:       new(t.Envvars),
		VaultGrace:    new(time.Duration(0)),
		ErrMissingKey: new(t.ErrMissingKey),
	}
	if cs := t.ChangeScript; cs != nil {
		out.ChangeScript = &api.ChangeScript{
			Command:          new(cs.Command),
			Args:             slices.Clone(cs.Args),
			Timeout:          new(cs.Timeout),
			FailOnError:      new(cs.FailOnError),
			RunOnFirstRender: new(cs.RunOnFirstRender),
		}
	}
	if w := t.Wait; w != nil {
		out.Wait = &api.WaitConfig{Min: clonePtr(w.Min), Max: clonePtr(w.Max)}
	}
	return out
}

func servicesToAPI(in []*structs.Service) []*api.Service {
	if in == nil {
		return nil
	}
	out := make([]*api.Service, len(in))
	for i, s := range in {
		if s == nil {
			continue
		}
		out[i] = &api.Service{
			Name:              s.Name,
			Tags:              slices.Clone(s.Tags),
			CanaryTags:        slices.Clone(s.CanaryTags),
			EnableTagOverride: s.EnableTagOverride,
			PortLabel:         s.PortLabel,
			AddressMode:       s.AddressMode,
			Address:           s.Address,
			Meta:              maps.Clone(s.Meta),
			CanaryMeta:        maps.Clone(s.CanaryMeta),
			TaggedAddresses:   maps.Clone(s.TaggedAddresses),
			TaskName:          s.TaskName,
			Checks:            checksToAPI(s.Checks),
			CheckRestart:      checkRestartToAPI(s.CheckRestart),
			OnUpdate:          s.OnUpdate,
			Provider:          s.Provider,
			Cluster:           s.Cluster,
			Kind:              s.Kind,
		}
	}
	return out
}

func checksToAPI(in []*structs.ServiceCheck) []api.ServiceCheck {
	if in == nil {
		return nil
	}
	out := make([]api.ServiceCheck, len(in))
	for i, c := range in {
		var header map[string][]string
		if c.Header != nil {
			header = make(map[string][]string, len(c.Header))
			for k, v := range c.Header {
				header[k] = slices.Clone(v)
			}
		}
		out[i] = api.ServiceCheck{
			Name: c.Name, Type: c.Type, Command: c.Command, Args: slices.Clone(c.Args),
			Path: c.Path, Protocol: c.Protocol, PortLabel: c.PortLabel, Expose: c.Expose,
			AddressMode: c.AddressMode, Interval: c.Interval, Timeout: c.Timeout,
			InitialStatus: c.InitialStatus, TLSServerName: c.TLSServerName, TLSSkipVerify: c.TLSSkipVerify,
			Header: header, Method: c.Method, CheckRestart: checkRestartToAPI(c.CheckRestart),
			TaskName: c.TaskName, SuccessBeforePassing: c.SuccessBeforePassing,
			FailuresBeforeCritical: c.FailuresBeforeCritical, FailuresBeforeWarning: c.FailuresBeforeWarning,
			Body: c.Body, OnUpdate: c.OnUpdate,
		}
	}
	return out
}

func checkRestartToAPI(in *structs.CheckRestart) *api.CheckRestart {
	if in == nil {
		return nil
	}
	return &api.CheckRestart{Limit: in.Limit, Grace: new(in.Grace), IgnoreWarnings: in.IgnoreWarnings}
}

func networksToAPI(in []*structs.NetworkResource) []*api.NetworkResource {
	if in == nil {
		return nil
	}
	out := make([]*api.NetworkResource, len(in))
	for i, n := range in {
		if n == nil {
			continue
		}
		nr := &api.NetworkResource{
			Mode:          n.Mode,
			Device:        n.Device,
			CIDR:          n.CIDR,
			IP:            n.IP,
			ReservedPorts: portsToAPI(n.ReservedPorts),
			DynamicPorts:  portsToAPI(n.DynamicPorts),
			Hostname:      n.Hostname,
			MBits:         nonZero(n.MBits),
		}
		if d := n.DNS; d != nil {
			nr.DNS = &api.DNSConfig{
				Servers:  slices.Clone(d.Servers),
				Searches: slices.Clone(d.Searches),
				Options:  slices.Clone(d.Options),
			}
		}
		if c := n.CNI; c != nil {
			nr.CNI = &api.CNIConfig{Args: maps.Clone(c.Args)}
		}
		out[i] = nr
	}
	return out
}

func portsToAPI(in []structs.Port) []api.Port {
	if in == nil {
		return nil
	}
	out := make([]api.Port, len(in))
	for i, p := range in {
		out[i] = api.Port{
			Label:           p.Label,
			Value:           p.Value,
			To:              p.To,
			HostNetwork:     p.HostNetwork,
			IgnoreCollision: p.IgnoreCollision,
		}
	}
	return out
}

func constraintsToAPI(in []*structs.Constraint) []*api.Constraint {
	if in == nil {
		return nil
	}
	out := make([]*api.Constraint, len(in))
	for i, c := range in {
		if c != nil {
			out[i] = &api.Constraint{LTarget: c.LTarget, RTarget: c.RTarget, Operand: c.Operand}
		}
	}
	return out
}

func affinitiesToAPI(in []*structs.Affinity) []*api.Affinity {
	if in == nil {
		return nil
	}
	out := make([]*api.Affinity, len(in))
	for i, a := range in {
		if a != nil {
			out[i] = &api.Affinity{LTarget: a.LTarget, RTarget: a.RTarget, Operand: a.Operand, Weight: new(a.Weight)}
		}
	}
	return out
}

func spreadsToAPI(in []*structs.Spread) []*api.Spread {
	if in == nil {
		return nil
	}
	out := make([]*api.Spread, len(in))
	for i, s := range in {
		if s == nil {
			continue
		}
		sp := &api.Spread{Attribute: s.Attribute, Weight: new(s.Weight)}
		if s.SpreadTarget != nil {
			sp.SpreadTarget = make([]*api.SpreadTarget, len(s.SpreadTarget))
			for k, t := range s.SpreadTarget {
				if t != nil {
					sp.SpreadTarget[k] = &api.SpreadTarget{Value: t.Value, Percent: t.Percent}
				}
			}
		}
		out[i] = sp
	}
	return out
}

func updateToAPI(u *structs.UpdateStrategy) *api.UpdateStrategy {
	if u == nil {
		return nil
	}
	return &api.UpdateStrategy{
		Stagger:          new(u.Stagger),
		MaxParallel:      new(u.MaxParallel),
		HealthCheck:      new(u.HealthCheck),
		MinHealthyTime:   new(u.MinHealthyTime),
		HealthyDeadline:  new(u.HealthyDeadline),
		ProgressDeadline: new(u.ProgressDeadline),
		Canary:           new(u.Canary),
		AutoRevert:       new(u.AutoRevert),
		AutoPromote:      new(u.AutoPromote),
	}
}

func migrateToAPI(m *structs.MigrateStrategy) *api.MigrateStrategy {
	if m == nil {
		return nil
	}
	return &api.MigrateStrategy{
		MaxParallel:     new(m.MaxParallel),
		HealthCheck:     new(m.HealthCheck),
		MinHealthyTime:  new(m.MinHealthyTime),
		HealthyDeadline: new(m.HealthyDeadline),
	}
}

func restartToAPI(r *structs.RestartPolicy) *api.RestartPolicy {
	if r == nil {
		return nil
	}
	return &api.RestartPolicy{
		Interval:        new(r.Interval),
		Attempts:        new(r.Attempts),
		Delay:           new(r.Delay),
		Mode:            new(r.Mode),
		RenderTemplates: new(r.RenderTemplates),
	}
}

func rescheduleToAPI(r *structs.ReschedulePolicy) *api.ReschedulePolicy {
	if r == nil {
		return nil
	}
	return &api.ReschedulePolicy{
		Attempts:      new(r.Attempts),
		Interval:      new(r.Interval),
		Delay:         new(r.Delay),
		DelayFunction: new(r.DelayFunction),
		MaxDelay:      new(r.MaxDelay),
		Unlimited:     new(r.Unlimited),
	}
}

func periodicToAPI(p *structs.PeriodicConfig) *api.PeriodicConfig {
	if p == nil {
		return nil
	}
	out := &api.PeriodicConfig{
		Enabled:         new(p.Enabled),
		Spec:            new(p.Spec),
		Specs:           slices.Clone(p.Specs),
		SpecType:        new(p.SpecType),
		ProhibitOverlap: new(p.ProhibitOverlap),
		TimeZone:        new(p.TimeZone),
	}
	if out.Specs == nil {
		out.Specs = []string{}
	}
	return out
}

func parameterizedToAPI(p *structs.ParameterizedJobConfig) *api.ParameterizedJobConfig {
	if p == nil {
		return nil
	}
	return &api.ParameterizedJobConfig{
		Payload:      p.Payload,
		MetaRequired: slices.Clone(p.MetaRequired),
		MetaOptional: slices.Clone(p.MetaOptional),
	}
}

func workloadIdentityToAPI(wi *structs.WorkloadIdentity) *api.WorkloadIdentity {
	if wi == nil {
		return nil
	}
	return &api.WorkloadIdentity{
		Name:     wi.Name,
		Audience: slices.Clone(wi.Audience),
		Env:      wi.Env,
		File:     wi.File,
	}
}

// nonZero returns a pointer to v, or nil when v is the zero value.
func nonZero[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}
