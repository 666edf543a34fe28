package client

import (
	"maps"
	"slices"

	"github.com/nomadq/nomadq/structs"
)

// copyRPC returns a copy of v, a pointer to the args or reply of one of
// the calls a client makes all the time (watching its allocs, fetching
// them, reporting their status), that shares no memory with v; ok is
// false for any other type, which then takes the msgpack round trip.
// Copying by hand is several times cheaper than encoding and decoding,
// and with thousands of simulated nodes or allocs a second on one agent
// those calls are a large part of its work.
//
// Allocations are copied with their job: a client must be free to change
// what it got without reaching into the server's state.
func copyRPC(v any) (out any, ok bool) {
	switch v := v.(type) {
	case *structs.NodeSpecificRequest:
		c := *v
		return &c, true
	case *structs.NodeClientAllocsResponse:
		c := *v
		c.Allocs = maps.Clone(v.Allocs)
		return &c, true
	case *structs.NodesClientAllocsRequest:
		c := *v
		c.Nodes = slices.Clone(v.Nodes)
		return &c, true
	case *structs.NodesClientAllocsResponse:
		c := *v
		if v.Allocs != nil {
			c.Allocs = make(map[string]map[string]uint64, len(v.Allocs))
			for node, allocs := range v.Allocs {
				c.Allocs[node] = maps.Clone(allocs)
			}
		}
		return &c, true
	case *structs.AllocsGetRequest:
		c := *v
		c.AllocIDs = slices.Clone(v.AllocIDs)
		return &c, true
	case *structs.AllocsGetResponse:
		c := *v
		c.Allocs = copyAllocs(v.Allocs)
		return &c, true
	case *structs.AllocUpdateRequest:
		c := *v
		c.Alloc = copyAllocs(v.Alloc)
		if v.Evals != nil {
			c.Evals = make([]*structs.Evaluation, len(v.Evals))
			for i, e := range v.Evals {
				c.Evals[i] = e.Copy()
			}
		}
		return &c, true
	case *structs.GenericResponse:
		c := *v
		return &c, true
	}
	return nil, false
}

// copyAllocs deep-copies allocations, each with its own copy of its job.
func copyAllocs(in []*structs.Allocation) []*structs.Allocation {
	if in == nil {
		return nil
	}
	out := make([]*structs.Allocation, len(in))
	for i, a := range in {
		c := a.Copy()
		if c != nil {
			c.Job = a.Job.Copy()
		}
		out[i] = c
	}
	return out
}
