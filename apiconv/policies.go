package apiconv

import (
	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

func restart(r *api.RestartPolicy) *structs.RestartPolicy {
	if r == nil {
		return nil
	}
	return &structs.RestartPolicy{
		Attempts:        deref(r.Attempts),
		Interval:        deref(r.Interval),
		Delay:           deref(r.Delay),
		Mode:            deref(r.Mode),
		RenderTemplates: deref(r.RenderTemplates),
	}
}

func reschedule(r *api.ReschedulePolicy) *structs.ReschedulePolicy {
	if r == nil {
		return nil
	}
	return &structs.ReschedulePolicy{
		Attempts:      deref(r.Attempts),
		Interval:      deref(r.Interval),
		Delay:         deref(r.Delay),
		DelayFunction: deref(r.DelayFunction),
		MaxDelay:      deref(r.MaxDelay),
		Unlimited:     deref(r.Unlimited),
	}
}
