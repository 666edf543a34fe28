package structs

import (
	"time"

	"github.com/hashicorp/nomad/api"
)

// ApiJobToStructJob converts a job from the wire type of the official
// client to the internal model.
//
// It expects a job on which api.Job.Canonicalize has run, so that defaults
// and the job-level update, reschedule and migrate blocks are already merged
// into the groups; the server path is
//
//	aj.Canonicalize()
//	j := ApiJobToStructJob(aj)
//	j.Canonicalize()
//
// Any nil pointer becomes the zero value of the field. Maps, slices and
// nested values are copied, so the result shares no memory with aj.
//
// Fields of api.Job that nomadq does not model are dropped:
//   - Job: Multiregion, UI, ConsulNamespace, VaultNamespace, NomadTokenID,
//     VersionTag;
//   - TaskGroup: Volumes, Disconnect, StopAfterClientDisconnect,
//     MaxClientDisconnect, PreventRescheduleOnLost, Scaling, Consul;
//   - Task: Vault, Consul, VolumeMounts, CSIPluginConfig, ScalingPolicies,
//     Secrets, Identity, Identities, Actions, Schedule;
//   - Resources: Devices, NUMA, SecretsMB, IOPS;
//   - Service: Checks, CheckRestart, Connect, Identity, Weights;
//   - Template: VaultGrace (always 0 on the way back);
//   - LogConfig: Enabled (deprecated; when Disabled is unset it is taken
//     as the negation of Enabled).
//
// Pointer fields that api.Job.Canonicalize leaves nil (SubmitTime,
// DispatchIdempotencyToken, Resources.MemoryMaxMB and DiskMB, a network's
// MBits) come back from StructJobToApiJob as nil when their value is zero.
func ApiJobToStructJob(j *api.Job) *Job {
	if j == nil {
		return nil
	}
	out := &Job{
		Region:                   deref(j.Region),
		Namespace:                deref(j.Namespace),
		ID:                       deref(j.ID),
		ParentID:                 deref(j.ParentID),
		Name:                     deref(j.Name),
		Type:                     deref(j.Type),
		Priority:                 deref(j.Priority),
		AllAtOnce:                deref(j.AllAtOnce),
		Datacenters:              cloneSlice(j.Datacenters),
		NodePool:                 deref(j.NodePool),
		Constraints:              apiConstraints(j.Constraints),
		Affinities:               apiAffinities(j.Affinities),
		Spreads:                  apiSpreads(j.Spreads),
		Periodic:                 apiPeriodic(j.Periodic),
		ParameterizedJob:         apiParameterized(j.ParameterizedJob),
		Dispatched:               j.Dispatched,
		DispatchIdempotencyToken: deref(j.DispatchIdempotencyToken),
		Payload:                  cloneSlice(j.Payload),
		Reschedule:               apiReschedule(j.Reschedule),
		Migrate:                  apiMigrate(j.Migrate),
		Meta:                     copyMap(j.Meta),
		Stop:                     deref(j.Stop),
		Status:                   deref(j.Status),
		StatusDescription:        deref(j.StatusDescription),
		Stable:                   deref(j.Stable),
		Version:                  deref(j.Version),
		SubmitTime:               deref(j.SubmitTime),
		CreateIndex:              deref(j.CreateIndex),
		ModifyIndex:              deref(j.ModifyIndex),
		JobModifyIndex:           deref(j.JobModifyIndex),
	}
	if u := apiUpdate(j.Update); u != nil {
		out.Update = *u
	}
	if j.TaskGroups != nil {
		out.TaskGroups = make([]*TaskGroup, len(j.TaskGroups))
		for i, tg := range j.TaskGroups {
			out.TaskGroups[i] = apiTaskGroup(tg)
		}
	}
	return out
}

// StructJobToApiJob converts an internal job to the wire type of the
// official client. The result has the shape of a canonicalized api.Job:
// every pointer that api.Job.Canonicalize sets is non-nil, and the fields
// nomadq does not model (see ApiJobToStructJob) are nil or empty, except
// ConsulNamespace, VaultNamespace and NomadTokenID, which are "".
func StructJobToApiJob(j *Job) *api.Job {
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
		Datacenters:              cloneSlice(j.Datacenters),
		NodePool:                 new(j.NodePool),
		Constraints:              structConstraints(j.Constraints),
		Affinities:               structAffinities(j.Affinities),
		Spreads:                  structSpreads(j.Spreads),
		Periodic:                 structPeriodic(j.Periodic),
		ParameterizedJob:         structParameterized(j.ParameterizedJob),
		Reschedule:               structReschedule(j.Reschedule),
		Migrate:                  structMigrate(j.Migrate),
		Meta:                     copyMap(j.Meta),
		Stop:                     new(j.Stop),
		ParentID:                 new(j.ParentID),
		Dispatched:               j.Dispatched,
		DispatchIdempotencyToken: nonZero(j.DispatchIdempotencyToken),
		Payload:                  cloneSlice(j.Payload),
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
	if j.Update != (UpdateStrategy{}) {
		out.Update = structUpdate(&j.Update)
	}
	if j.TaskGroups != nil {
		out.TaskGroups = make([]*api.TaskGroup, len(j.TaskGroups))
		for i, tg := range j.TaskGroups {
			out.TaskGroups[i] = structTaskGroup(tg)
		}
	}
	return out
}

func apiTaskGroup(tg *api.TaskGroup) *TaskGroup {
	if tg == nil {
		return nil
	}
	out := &TaskGroup{
		Name:             deref(tg.Name),
		Count:            deref(tg.Count),
		Constraints:      apiConstraints(tg.Constraints),
		Affinities:       apiAffinities(tg.Affinities),
		Spreads:          apiSpreads(tg.Spreads),
		RestartPolicy:    apiRestart(tg.RestartPolicy),
		ReschedulePolicy: apiReschedule(tg.ReschedulePolicy),
		Update:           apiUpdate(tg.Update),
		Migrate:          apiMigrate(tg.Migrate),
		Networks:         apiNetworks(tg.Networks),
		Services:         apiServices(tg.Services),
		Meta:             copyMap(tg.Meta),
		ShutdownDelay:    clonePtr(tg.ShutdownDelay),
		MaxRunDuration:   clonePtr(tg.MaxRunDuration),
	}
	if d := tg.EphemeralDisk; d != nil {
		out.EphemeralDisk = &EphemeralDisk{
			Sticky:  deref(d.Sticky),
			SizeMB:  deref(d.SizeMB),
			Migrate: deref(d.Migrate),
		}
	}
	if tg.Tasks != nil {
		out.Tasks = make([]*Task, len(tg.Tasks))
		for i, t := range tg.Tasks {
			out.Tasks[i] = apiTask(t)
		}
	}
	return out
}

func structTaskGroup(tg *TaskGroup) *api.TaskGroup {
	if tg == nil {
		return nil
	}
	out := &api.TaskGroup{
		Name:             new(tg.Name),
		Count:            new(tg.Count),
		Constraints:      structConstraints(tg.Constraints),
		Affinities:       structAffinities(tg.Affinities),
		Spreads:          structSpreads(tg.Spreads),
		RestartPolicy:    structRestart(tg.RestartPolicy),
		ReschedulePolicy: structReschedule(tg.ReschedulePolicy),
		Update:           structUpdate(tg.Update),
		Migrate:          structMigrate(tg.Migrate),
		Networks:         structNetworks(tg.Networks),
		Services:         structServices(tg.Services),
		Meta:             copyMap(tg.Meta),
		ShutdownDelay:    clonePtr(tg.ShutdownDelay),
		MaxRunDuration:   clonePtr(tg.MaxRunDuration),
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
			out.Tasks[i] = structTask(t)
		}
	}
	return out
}

func apiTask(t *api.Task) *Task {
	if t == nil {
		return nil
	}
	out := &Task{
		Name:          t.Name,
		Driver:        t.Driver,
		User:          t.User,
		Config:        copyConfig(t.Config),
		Env:           copyMap(t.Env),
		Services:      apiServices(t.Services),
		Constraints:   apiConstraints(t.Constraints),
		Affinities:    apiAffinities(t.Affinities),
		RestartPolicy: apiRestart(t.RestartPolicy),
		Meta:          copyMap(t.Meta),
		KillTimeout:   deref(t.KillTimeout),
		Leader:        t.Leader,
		ShutdownDelay: t.ShutdownDelay,
		KillSignal:    t.KillSignal,
		Kind:          t.Kind,
	}
	if r := t.Resources; r != nil {
		out.Resources = &Resources{
			CPU:         deref(r.CPU),
			Cores:       deref(r.Cores),
			MemoryMB:    deref(r.MemoryMB),
			MemoryMaxMB: deref(r.MemoryMaxMB),
			DiskMB:      deref(r.DiskMB),
			Networks:    apiNetworks(r.Networks),
		}
	}
	if p := t.DispatchPayload; p != nil {
		out.DispatchPayload = &DispatchPayloadConfig{File: p.File}
	}
	if l := t.Lifecycle; l != nil {
		out.Lifecycle = &TaskLifecycle{Hook: l.Hook, Sidecar: l.Sidecar}
	}
	if l := t.LogConfig; l != nil {
		out.LogConfig = &LogConfig{
			MaxFiles:      deref(l.MaxFiles),
			MaxFileSizeMB: deref(l.MaxFileSizeMB),
			Disabled:      deref(l.Disabled),
		}
		if l.Disabled == nil && l.Enabled != nil {
			out.LogConfig.Disabled = !*l.Enabled
		}
	}
	if t.Artifacts != nil {
		out.Artifacts = make([]*TaskArtifact, len(t.Artifacts))
		for i, a := range t.Artifacts {
			out.Artifacts[i] = apiArtifact(a)
		}
	}
	if t.Templates != nil {
		out.Templates = make([]*Template, len(t.Templates))
		for i, tmpl := range t.Templates {
			out.Templates[i] = apiTemplate(tmpl)
		}
	}
	return out
}

func structTask(t *Task) *api.Task {
	if t == nil {
		return nil
	}
	out := &api.Task{
		Name:          t.Name,
		Driver:        t.Driver,
		User:          t.User,
		Config:        copyConfig(t.Config),
		Env:           copyMap(t.Env),
		Services:      structServices(t.Services),
		Constraints:   structConstraints(t.Constraints),
		Affinities:    structAffinities(t.Affinities),
		RestartPolicy: structRestart(t.RestartPolicy),
		Meta:          copyMap(t.Meta),
		KillTimeout:   new(t.KillTimeout),
		Leader:        t.Leader,
		ShutdownDelay: t.ShutdownDelay,
		KillSignal:    t.KillSignal,
		Kind:          t.Kind,
	}
	if r := t.Resources; r != nil {
		out.Resources = &api.Resources{
			CPU:         new(r.CPU),
			Cores:       new(r.Cores),
			MemoryMB:    new(r.MemoryMB),
			MemoryMaxMB: nonZero(r.MemoryMaxMB),
			DiskMB:      nonZero(r.DiskMB),
			Networks:    structNetworks(r.Networks),
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
			out.Artifacts[i] = structArtifact(a)
		}
	}
	if t.Templates != nil {
		out.Templates = make([]*api.Template, len(t.Templates))
		for i, tmpl := range t.Templates {
			out.Templates[i] = structTemplate(tmpl)
		}
	}
	return out
}

func apiArtifact(a *api.TaskArtifact) *TaskArtifact {
	if a == nil {
		return nil
	}
	return &TaskArtifact{
		GetterSource:   deref(a.GetterSource),
		GetterOptions:  copyMap(a.GetterOptions),
		GetterHeaders:  copyMap(a.GetterHeaders),
		GetterMode:     deref(a.GetterMode),
		GetterInsecure: deref(a.GetterInsecure),
		RelativeDest:   deref(a.RelativeDest),
		Chown:          a.Chown,
	}
}

func structArtifact(a *TaskArtifact) *api.TaskArtifact {
	if a == nil {
		return nil
	}
	return &api.TaskArtifact{
		GetterSource:   new(a.GetterSource),
		GetterOptions:  copyMap(a.GetterOptions),
		GetterHeaders:  copyMap(a.GetterHeaders),
		GetterMode:     new(a.GetterMode),
		GetterInsecure: new(a.GetterInsecure),
		RelativeDest:   new(a.RelativeDest),
		Chown:          a.Chown,
	}
}

func apiTemplate(t *api.Template) *Template {
	if t == nil {
		return nil
	}
	out := &Template{
		SourcePath:    deref(t.SourcePath),
		DestPath:      deref(t.DestPath),
		EmbeddedTmpl:  deref(t.EmbeddedTmpl),
		ChangeMode:    deref(t.ChangeMode),
		ChangeSignal:  deref(t.ChangeSignal),
		Splay:         deref(t.Splay),
		Perms:         deref(t.Perms),
		LeftDelim:     deref(t.LeftDelim),
		RightDelim:    deref(t.RightDelim),
		Envvars:       deref(t.Envvars),
		Once:          deref(t.Once),
		Uid:           clonePtr(t.Uid),
		Gid:           clonePtr(t.Gid),
		ErrMissingKey: deref(t.ErrMissingKey),
	}
	if cs := t.ChangeScript; cs != nil {
		out.ChangeScript = &ChangeScript{
			Command:          deref(cs.Command),
			Args:             cloneSlice(cs.Args),
			Timeout:          deref(cs.Timeout),
			FailOnError:      deref(cs.FailOnError),
			RunOnFirstRender: deref(cs.RunOnFirstRender),
		}
	}
	if w := t.Wait; w != nil {
		out.Wait = &WaitConfig{Min: clonePtr(w.Min), Max: clonePtr(w.Max)}
	}
	return out
}

func structTemplate(t *Template) *api.Template {
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
			Args:             cloneSlice(cs.Args),
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

func apiServices(in []*api.Service) []*Service {
	if in == nil {
		return nil
	}
	out := make([]*Service, len(in))
	for i, s := range in {
		if s == nil {
			continue
		}
		out[i] = &Service{
			Name:              s.Name,
			PortLabel:         s.PortLabel,
			Tags:              cloneSlice(s.Tags),
			Provider:          s.Provider,
			AddressMode:       s.AddressMode,
			TaskName:          s.TaskName,
			CanaryTags:        cloneSlice(s.CanaryTags),
			EnableTagOverride: s.EnableTagOverride,
			Address:           s.Address,
			Meta:              copyMap(s.Meta),
			CanaryMeta:        copyMap(s.CanaryMeta),
			TaggedAddresses:   copyMap(s.TaggedAddresses),
			OnUpdate:          s.OnUpdate,
			Cluster:           s.Cluster,
			Kind:              s.Kind,
		}
	}
	return out
}

func structServices(in []*Service) []*api.Service {
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
			Tags:              cloneSlice(s.Tags),
			CanaryTags:        cloneSlice(s.CanaryTags),
			EnableTagOverride: s.EnableTagOverride,
			PortLabel:         s.PortLabel,
			AddressMode:       s.AddressMode,
			Address:           s.Address,
			Meta:              copyMap(s.Meta),
			CanaryMeta:        copyMap(s.CanaryMeta),
			TaggedAddresses:   copyMap(s.TaggedAddresses),
			TaskName:          s.TaskName,
			OnUpdate:          s.OnUpdate,
			Provider:          s.Provider,
			Cluster:           s.Cluster,
			Kind:              s.Kind,
		}
	}
	return out
}

func apiNetworks(in []*api.NetworkResource) []*NetworkResource {
	if in == nil {
		return nil
	}
	out := make([]*NetworkResource, len(in))
	for i, n := range in {
		if n == nil {
			continue
		}
		nr := &NetworkResource{
			Mode:          n.Mode,
			Device:        n.Device,
			CIDR:          n.CIDR,
			IP:            n.IP,
			Hostname:      n.Hostname,
			MBits:         deref(n.MBits),
			ReservedPorts: apiPorts(n.ReservedPorts),
			DynamicPorts:  apiPorts(n.DynamicPorts),
		}
		if d := n.DNS; d != nil {
			nr.DNS = &DNSConfig{
				Servers:  cloneSlice(d.Servers),
				Searches: cloneSlice(d.Searches),
				Options:  cloneSlice(d.Options),
			}
		}
		if c := n.CNI; c != nil {
			nr.CNI = &CNIConfig{Args: copyMap(c.Args)}
		}
		out[i] = nr
	}
	return out
}

func structNetworks(in []*NetworkResource) []*api.NetworkResource {
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
			ReservedPorts: structPorts(n.ReservedPorts),
			DynamicPorts:  structPorts(n.DynamicPorts),
			Hostname:      n.Hostname,
			MBits:         nonZero(n.MBits),
		}
		if d := n.DNS; d != nil {
			nr.DNS = &api.DNSConfig{
				Servers:  cloneSlice(d.Servers),
				Searches: cloneSlice(d.Searches),
				Options:  cloneSlice(d.Options),
			}
		}
		if c := n.CNI; c != nil {
			nr.CNI = &api.CNIConfig{Args: copyMap(c.Args)}
		}
		out[i] = nr
	}
	return out
}

func apiPorts(in []api.Port) []Port {
	if in == nil {
		return nil
	}
	out := make([]Port, len(in))
	for i, p := range in {
		out[i] = Port{
			Label:           p.Label,
			Value:           p.Value,
			To:              p.To,
			HostNetwork:     p.HostNetwork,
			IgnoreCollision: p.IgnoreCollision,
		}
	}
	return out
}

func structPorts(in []Port) []api.Port {
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

func apiConstraints(in []*api.Constraint) []*Constraint {
	if in == nil {
		return nil
	}
	out := make([]*Constraint, len(in))
	for i, c := range in {
		if c != nil {
			out[i] = &Constraint{LTarget: c.LTarget, RTarget: c.RTarget, Operand: c.Operand}
		}
	}
	return out
}

func structConstraints(in []*Constraint) []*api.Constraint {
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

func apiAffinities(in []*api.Affinity) []*Affinity {
	if in == nil {
		return nil
	}
	out := make([]*Affinity, len(in))
	for i, a := range in {
		if a != nil {
			out[i] = &Affinity{LTarget: a.LTarget, RTarget: a.RTarget, Operand: a.Operand, Weight: deref(a.Weight)}
		}
	}
	return out
}

func structAffinities(in []*Affinity) []*api.Affinity {
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

func apiSpreads(in []*api.Spread) []*Spread {
	if in == nil {
		return nil
	}
	out := make([]*Spread, len(in))
	for i, s := range in {
		if s == nil {
			continue
		}
		sp := &Spread{Attribute: s.Attribute, Weight: deref(s.Weight)}
		if s.SpreadTarget != nil {
			sp.SpreadTarget = make([]*SpreadTarget, len(s.SpreadTarget))
			for k, t := range s.SpreadTarget {
				if t != nil {
					sp.SpreadTarget[k] = &SpreadTarget{Value: t.Value, Percent: t.Percent}
				}
			}
		}
		out[i] = sp
	}
	return out
}

func structSpreads(in []*Spread) []*api.Spread {
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

func apiUpdate(u *api.UpdateStrategy) *UpdateStrategy {
	if u == nil {
		return nil
	}
	return &UpdateStrategy{
		Stagger:          deref(u.Stagger),
		MaxParallel:      deref(u.MaxParallel),
		HealthCheck:      deref(u.HealthCheck),
		MinHealthyTime:   deref(u.MinHealthyTime),
		HealthyDeadline:  deref(u.HealthyDeadline),
		ProgressDeadline: deref(u.ProgressDeadline),
		AutoRevert:       deref(u.AutoRevert),
		AutoPromote:      deref(u.AutoPromote),
		Canary:           deref(u.Canary),
	}
}

func structUpdate(u *UpdateStrategy) *api.UpdateStrategy {
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

func apiMigrate(m *api.MigrateStrategy) *MigrateStrategy {
	if m == nil {
		return nil
	}
	return &MigrateStrategy{
		MaxParallel:     deref(m.MaxParallel),
		HealthCheck:     deref(m.HealthCheck),
		MinHealthyTime:  deref(m.MinHealthyTime),
		HealthyDeadline: deref(m.HealthyDeadline),
	}
}

func structMigrate(m *MigrateStrategy) *api.MigrateStrategy {
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

func apiRestart(r *api.RestartPolicy) *RestartPolicy {
	if r == nil {
		return nil
	}
	return &RestartPolicy{
		Attempts:        deref(r.Attempts),
		Interval:        deref(r.Interval),
		Delay:           deref(r.Delay),
		Mode:            deref(r.Mode),
		RenderTemplates: deref(r.RenderTemplates),
	}
}

func structRestart(r *RestartPolicy) *api.RestartPolicy {
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

func apiReschedule(r *api.ReschedulePolicy) *ReschedulePolicy {
	if r == nil {
		return nil
	}
	return &ReschedulePolicy{
		Attempts:      deref(r.Attempts),
		Interval:      deref(r.Interval),
		Delay:         deref(r.Delay),
		DelayFunction: deref(r.DelayFunction),
		MaxDelay:      deref(r.MaxDelay),
		Unlimited:     deref(r.Unlimited),
	}
}

func structReschedule(r *ReschedulePolicy) *api.ReschedulePolicy {
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

// apiPeriodic turns an empty Specs list into nil; structPeriodic turns nil
// back into the empty list that api.PeriodicConfig.Canonicalize sets.
func apiPeriodic(p *api.PeriodicConfig) *PeriodicConfig {
	if p == nil {
		return nil
	}
	out := &PeriodicConfig{
		Enabled:         deref(p.Enabled),
		Spec:            deref(p.Spec),
		SpecType:        deref(p.SpecType),
		ProhibitOverlap: deref(p.ProhibitOverlap),
		TimeZone:        deref(p.TimeZone),
	}
	if len(p.Specs) > 0 {
		out.Specs = cloneSlice(p.Specs)
	}
	return out
}

func structPeriodic(p *PeriodicConfig) *api.PeriodicConfig {
	if p == nil {
		return nil
	}
	out := &api.PeriodicConfig{
		Enabled:         new(p.Enabled),
		Spec:            new(p.Spec),
		Specs:           cloneSlice(p.Specs),
		SpecType:        new(p.SpecType),
		ProhibitOverlap: new(p.ProhibitOverlap),
		TimeZone:        new(p.TimeZone),
	}
	if out.Specs == nil {
		out.Specs = []string{}
	}
	return out
}

func apiParameterized(p *api.ParameterizedJobConfig) *ParameterizedJobConfig {
	if p == nil {
		return nil
	}
	return &ParameterizedJobConfig{
		Payload:      p.Payload,
		MetaRequired: cloneSlice(p.MetaRequired),
		MetaOptional: cloneSlice(p.MetaOptional),
	}
}

func structParameterized(p *ParameterizedJobConfig) *api.ParameterizedJobConfig {
	if p == nil {
		return nil
	}
	return &api.ParameterizedJobConfig{
		Payload:      p.Payload,
		MetaRequired: cloneSlice(p.MetaRequired),
		MetaOptional: cloneSlice(p.MetaOptional),
	}
}

// deref returns *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// nonZero returns a pointer to v, or nil when v is the zero value.
func nonZero[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// clonePtr returns a pointer to a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cloneSlice copies s, keeping nil as nil and empty as empty.
func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// copyConfig deep-copies a free-form driver configuration: nested maps and
// slices are copied, other values are copied by assignment.
func copyConfig(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyConfigValue(v)
	}
	return out
}

func copyConfigValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return copyConfig(x)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyConfigValue(e)
		}
		return out
	case []map[string]any:
		if x == nil {
			return x
		}
		out := make([]map[string]any, len(x))
		for i, e := range x {
			out[i] = copyConfig(e)
		}
		return out
	case []string:
		return cloneSlice(x)
	case []int:
		return cloneSlice(x)
	case []int64:
		return cloneSlice(x)
	case []float64:
		return cloneSlice(x)
	case []bool:
		return cloneSlice(x)
	case []byte:
		return cloneSlice(x)
	case map[string]string:
		return copyMap(x)
	}
	return v
}
