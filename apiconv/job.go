package apiconv

import (
	"maps"
	"slices"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// Job maps a job from the wire type of the official client to the
// internal model. It does not refuse anything: submitted jobs go through
// Convert, which runs Check first. Job copies some fields Check refuses
// today (templates, artifacts, services, ports, shutdown_delay, ...), so
// that making one take effect is a line in the fields table.
//
// It expects a job on which api.Job.Canonicalize has run, so that defaults
// and the job-level update, reschedule and migrate blocks are already merged
// into the groups; the server path is
//
//	aj.Canonicalize()
//	j := Job(aj)
//	j.Canonicalize()
//
// Any nil pointer becomes the zero value of the field. Maps, slices and
// nested values are copied, so the result shares no memory with aj.
func Job(j *api.Job) *structs.Job {
	if j == nil {
		return nil
	}
	out := &structs.Job{
		Region:                   deref(j.Region),
		Namespace:                deref(j.Namespace),
		ID:                       deref(j.ID),
		ParentID:                 deref(j.ParentID),
		Name:                     deref(j.Name),
		Type:                     deref(j.Type),
		Priority:                 deref(j.Priority),
		AllAtOnce:                deref(j.AllAtOnce),
		Datacenters:              slices.Clone(j.Datacenters),
		NodePool:                 deref(j.NodePool),
		Constraints:              constraints(j.Constraints),
		Affinities:               affinities(j.Affinities),
		Spreads:                  spreads(j.Spreads),
		Periodic:                 periodic(j.Periodic),
		ParameterizedJob:         parameterized(j.ParameterizedJob),
		Dispatched:               j.Dispatched,
		DispatchIdempotencyToken: deref(j.DispatchIdempotencyToken),
		Payload:                  slices.Clone(j.Payload),
		Reschedule:               reschedule(j.Reschedule),
		Migrate:                  migrate(j.Migrate),
		Meta:                     maps.Clone(j.Meta),
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
	if u := update(j.Update); u != nil {
		out.Update = *u
	}
	if j.TaskGroups != nil {
		out.TaskGroups = make([]*structs.TaskGroup, len(j.TaskGroups))
		for i, tg := range j.TaskGroups {
			out.TaskGroups[i] = taskGroup(tg)
		}
	}
	return out
}

// periodic turns an empty Specs list into nil; periodicToAPI turns nil
// back into the empty list that api.PeriodicConfig.Canonicalize sets.
func periodic(p *api.PeriodicConfig) *structs.PeriodicConfig {
	if p == nil {
		return nil
	}
	out := &structs.PeriodicConfig{
		Enabled:         deref(p.Enabled),
		Spec:            deref(p.Spec),
		SpecType:        deref(p.SpecType),
		ProhibitOverlap: deref(p.ProhibitOverlap),
		TimeZone:        deref(p.TimeZone),
	}
	if len(p.Specs) > 0 {
		out.Specs = slices.Clone(p.Specs)
	}
	return out
}

func parameterized(p *api.ParameterizedJobConfig) *structs.ParameterizedJobConfig {
	if p == nil {
		return nil
	}
	return &structs.ParameterizedJobConfig{
		Payload:      p.Payload,
		MetaRequired: slices.Clone(p.MetaRequired),
		MetaOptional: slices.Clone(p.MetaOptional),
	}
}
