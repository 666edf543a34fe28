package apiconv

import (
	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

func constraints(in []*api.Constraint) []*structs.Constraint {
	if in == nil {
		return nil
	}
	out := make([]*structs.Constraint, len(in))
	for i, c := range in {
		if c != nil {
			out[i] = &structs.Constraint{LTarget: c.LTarget, RTarget: c.RTarget, Operand: c.Operand}
		}
	}
	return out
}

func affinities(in []*api.Affinity) []*structs.Affinity {
	if in == nil {
		return nil
	}
	out := make([]*structs.Affinity, len(in))
	for i, a := range in {
		if a != nil {
			out[i] = &structs.Affinity{LTarget: a.LTarget, RTarget: a.RTarget, Operand: a.Operand, Weight: deref(a.Weight)}
		}
	}
	return out
}

func spreads(in []*api.Spread) []*structs.Spread {
	if in == nil {
		return nil
	}
	out := make([]*structs.Spread, len(in))
	for i, s := range in {
		if s == nil {
			continue
		}
		sp := &structs.Spread{Attribute: s.Attribute, Weight: deref(s.Weight)}
		if s.SpreadTarget != nil {
			sp.SpreadTarget = make([]*structs.SpreadTarget, len(s.SpreadTarget))
			for k, t := range s.SpreadTarget {
				if t != nil {
					sp.SpreadTarget[k] = &structs.SpreadTarget{Value: t.Value, Percent: t.Percent}
				}
			}
		}
		out[i] = sp
	}
	return out
}
