package planfit

import "github.com/nomadq/nomadq/structs"

// Inflight holds the placements of plans answered before their Raft
// entry was applied, so that the next plans cannot take the same
// capacity. Only the plan applier's goroutine uses it; the zero value
// holds none.
type Inflight struct {
	plans []*inflightPlan
	// Waiting, when set (tests), is called as WaitApplied starts.
	Waiting func()
}

type inflightPlan struct {
	applied <-chan struct{} // closed once the entry is applied or failed
	byNode  map[string][]*structs.Allocation
}

// maxInflightPlans bounds the plans awaiting their entry: the applier
// waits for the oldest beyond it. Workers bound it already (each has at
// most two plans awaiting their entry), so this is only a safety net.
const maxInflightPlans = 64

// Prune forgets the plans whose entry is applied: a snapshot taken after
// holds their placements. With too many in flight it waits for the
// oldest.
func (f *Inflight) Prune() {
	if len(f.plans) >= maxInflightPlans {
		<-f.plans[0].applied
	}
	kept := f.plans[:0]
	for _, p := range f.plans {
		select {
		case <-p.applied:
		default:
			kept = append(kept, p)
		}
	}
	clear(f.plans[len(kept):])
	f.plans = kept
}

// WaitApplied waits until every plan in flight is applied (or failed).
func (f *Inflight) WaitApplied() {
	if f.Waiting != nil {
		f.Waiting()
	}
	for _, p := range f.plans {
		<-p.applied
	}
	f.Prune()
}

// Len returns how many plans are in flight.
func (f *Inflight) Len() int { return len(f.plans) }

// Add counts a plan's placements, by node, until applied is closed.
func (f *Inflight) Add(byNode map[string][]*structs.Allocation, applied <-chan struct{}) {
	f.plans = append(f.plans, &inflightPlan{applied: applied, byNode: byNode})
}

// onNode returns the in-flight placements on a node.
func (f *Inflight) onNode(nodeID string) []*structs.Allocation {
	if f == nil {
		return nil
	}
	var out []*structs.Allocation
	for _, p := range f.plans {
		out = append(out, p.byNode[nodeID]...)
	}
	return out
}
