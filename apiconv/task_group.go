package apiconv

import (
	"maps"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

func taskGroup(tg *api.TaskGroup) *structs.TaskGroup {
	if tg == nil {
		return nil
	}
	out := &structs.TaskGroup{
		Name:             deref(tg.Name),
		Count:            deref(tg.Count),
		Constraints:      constraints(tg.Constraints),
		Affinities:       affinities(tg.Affinities),
		Spreads:          spreads(tg.Spreads),
		RestartPolicy:    restart(tg.RestartPolicy),
		ReschedulePolicy: reschedule(tg.ReschedulePolicy),
		Update:           update(tg.Update),
		Migrate:          migrate(tg.Migrate),
		Networks:         networks(tg.Networks),
		Services:         services(tg.Services),
		Meta:             maps.Clone(tg.Meta),
		ShutdownDelay:    clonePtr(tg.ShutdownDelay),
		MaxRunDuration:   clonePtr(tg.MaxRunDuration),
		Scaling:          scaling(tg.Scaling, deref(tg.Count)),
		Volumes:          volumes(tg.Volumes),
	}
	if d := tg.EphemeralDisk; d != nil {
		out.EphemeralDisk = &structs.EphemeralDisk{
			Sticky:  deref(d.Sticky),
			SizeMB:  deref(d.SizeMB),
			Migrate: deref(d.Migrate),
		}
	}
	if tg.Tasks != nil {
		out.Tasks = make([]*structs.Task, len(tg.Tasks))
		for i, t := range tg.Tasks {
			out.Tasks[i] = task(t)
		}
	}
	return out
}

func update(u *api.UpdateStrategy) *structs.UpdateStrategy {
	if u == nil {
		return nil
	}
	return &structs.UpdateStrategy{
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

func migrate(m *api.MigrateStrategy) *structs.MigrateStrategy {
	if m == nil {
		return nil
	}
	return &structs.MigrateStrategy{
		MaxParallel:     deref(m.MaxParallel),
		HealthCheck:     deref(m.HealthCheck),
		MinHealthyTime:  deref(m.MinHealthyTime),
		HealthyDeadline: deref(m.HealthyDeadline),
	}
}

// scaling maps a group's scaling block, with the api's defaults (enabled,
// horizontal, min = the group's count). A missing max is -1, which
// validation refuses.
func scaling(p *api.ScalingPolicy, count int) *structs.ScalingPolicy {
	if p == nil {
		return nil
	}
	out := &structs.ScalingPolicy{
		Type:    p.Type,
		Policy:  maps.Clone(p.Policy),
		Min:     int64(count),
		Max:     -1,
		Enabled: true,
	}
	if out.Type == "" {
		out.Type = structs.ScalingPolicyTypeHorizontal
	}
	if p.Min != nil {
		out.Min = *p.Min
	}
	if p.Max != nil {
		out.Max = *p.Max
	}
	if p.Enabled != nil {
		out.Enabled = *p.Enabled
	}
	return out
}
