package structs

import (
	"fmt"
	"maps"
)

// ScalingPolicyTypeHorizontal is the one scaling policy type: a task
// group's count between Min and Max.
const ScalingPolicyTypeHorizontal = "horizontal"

// ScalingPolicy is a task group's scaling block: the bounds within which
// its count may be changed (nomad job scale, the scale API, an external
// autoscaler), and the autoscaler's own Policy, which nomadq stores and
// serves but does not read, as Nomad's servers do. The server sets ID and
// Target when the job is registered.
type ScalingPolicy struct {
	ID      string
	Type    string
	Target  map[string]string
	Policy  map[string]any
	Min     int64
	Max     int64
	Enabled bool

	CreateIndex uint64
	ModifyIndex uint64
}

// ScalingPolicyListStub is a policy in a listing.
type ScalingPolicyListStub struct {
	ID          string
	Enabled     bool
	Type        string
	Target      map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the listing form of the policy.
func (p *ScalingPolicy) Stub() *ScalingPolicyListStub {
	return &ScalingPolicyListStub{ID: p.ID, Enabled: p.Enabled, Type: p.Type, Target: maps.Clone(p.Target),
		CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
}

// Copy returns a deep copy (Policy values are copied one level deep; the
// server never changes them).
func (p *ScalingPolicy) Copy() *ScalingPolicy {
	if p == nil {
		return nil
	}
	c := *p
	c.Target = maps.Clone(p.Target)
	c.Policy = CopyConfig(p.Policy)
	return &c
}

// validate checks the policy against its group's count.
func (p *ScalingPolicy) validate(count int, add func(string, ...any)) {
	if p.Type != ScalingPolicyTypeHorizontal {
		add("scaling policy type %q is not supported: only %q", p.Type, ScalingPolicyTypeHorizontal)
	}
	if p.Min < 0 {
		add("scaling policy minimum count %d must not be negative", p.Min)
	}
	if p.Max < 0 {
		add("scaling policy maximum count %d must not be negative (set max in the scaling block)", p.Max)
	}
	if p.Max < p.Min {
		add("scaling policy maximum count %d must not be less than minimum count %d", p.Max, p.Min)
	}
	if int64(count) < p.Min {
		add("task group count %d must not be less than minimum count %d in scaling policy", count, p.Min)
	}
	if int64(count) > p.Max {
		add("task group count %d must not be greater than maximum count %d in scaling policy", count, p.Max)
	}
}

// ScalingTarget is the Target of a group's policy.
func ScalingTarget(namespace, job, group string) map[string]string {
	return map[string]string{ScalingTargetNamespace: namespace, ScalingTargetJob: job, ScalingTargetGroup: group}
}

// CheckScaleCount refuses a count outside the group's scaling bounds, in
// Nomad's words.
func (tg *TaskGroup) CheckScaleCount(count int64) error {
	p := tg.Scaling
	if p == nil {
		return nil
	}
	if count > p.Max {
		return fmt.Errorf("group count was greater than scaling policy maximum: %d > %d", count, p.Max)
	}
	if count < p.Min {
		return fmt.Errorf("group count was less than scaling policy minimum: %d < %d", count, p.Min)
	}
	return nil
}

// ScalingPolicyListRequest lists scaling policies.
type ScalingPolicyListRequest struct {
	Job  string
	Type string
	QueryOptions
}

// ScalingPolicyListResponse answers a listing.
type ScalingPolicyListResponse struct {
	Policies []*ScalingPolicyListStub
	QueryMeta
}

// ScalingPolicySpecificRequest reads one policy by ID.
type ScalingPolicySpecificRequest struct {
	ID string
	QueryOptions
}

// SingleScalingPolicyResponse answers a read; Policy is nil when there is
// none.
type SingleScalingPolicyResponse struct {
	Policy *ScalingPolicy
	QueryMeta
}
