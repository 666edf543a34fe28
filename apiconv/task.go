package apiconv

import (
	"maps"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

func task(t *api.Task) *structs.Task {
	if t == nil {
		return nil
	}
	out := &structs.Task{
		Name:          t.Name,
		Driver:        t.Driver,
		User:          t.User,
		Config:        structs.CopyConfig(t.Config),
		Env:           maps.Clone(t.Env),
		Services:      services(t.Services),
		Constraints:   constraints(t.Constraints),
		Affinities:    affinities(t.Affinities),
		RestartPolicy: restart(t.RestartPolicy),
		Meta:          maps.Clone(t.Meta),
		KillTimeout:   deref(t.KillTimeout),
		Leader:        t.Leader,
		ShutdownDelay: t.ShutdownDelay,
		KillSignal:    t.KillSignal,
		Kind:          t.Kind,
		Identity:      workloadIdentity(defaultIdentity(t)),
		VolumeMounts:  volumeMounts(t.VolumeMounts),
	}
	if r := t.Resources; r != nil {
		out.Resources = &structs.Resources{
			CPU:         deref(r.CPU),
			Cores:       deref(r.Cores),
			MemoryMB:    deref(r.MemoryMB),
			MemoryMaxMB: deref(r.MemoryMaxMB),
			DiskMB:      deref(r.DiskMB),
			Networks:    networks(r.Networks),
		}
	}
	if p := t.DispatchPayload; p != nil {
		out.DispatchPayload = &structs.DispatchPayloadConfig{File: p.File}
	}
	if l := t.Lifecycle; l != nil {
		out.Lifecycle = &structs.TaskLifecycle{Hook: l.Hook, Sidecar: l.Sidecar}
	}
	if l := t.LogConfig; l != nil {
		out.LogConfig = &structs.LogConfig{
			MaxFiles:      deref(l.MaxFiles),
			MaxFileSizeMB: deref(l.MaxFileSizeMB),
			Disabled:      deref(l.Disabled),
		}
		if l.Disabled == nil && l.Enabled != nil {
			out.LogConfig.Disabled = !*l.Enabled
		}
	}
	if t.Artifacts != nil {
		out.Artifacts = make([]*structs.TaskArtifact, len(t.Artifacts))
		for i, a := range t.Artifacts {
			out.Artifacts[i] = artifact(a)
		}
	}
	if t.Templates != nil {
		out.Templates = make([]*structs.Template, len(t.Templates))
		for i, tmpl := range t.Templates {
			out.Templates[i] = template(tmpl)
		}
	}
	return out
}
