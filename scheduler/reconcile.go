package scheduler

import (
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// reconciler decides, for a service or batch job, what happens to each
// existing allocation and how many new ones each group needs. It reads no
// state of its own: the scheduler hands it the job, the job's allocations
// and the nodes.
type reconciler struct {
	job    *structs.Job // nil when the job was purged
	evalID string
	now    time.Time
	allocs []*structs.Allocation
	nodes  map[string]*structs.Node
	// inplaceOK reports whether an allocation may take the new job
	// definition where it runs (the node still passes static checks).
	inplaceOK func(a *structs.Allocation, tg *structs.TaskGroup) bool
}

// stopRequest stops an allocation; clientStatus is set for lost ones.
type stopRequest struct {
	alloc        *structs.Allocation
	desc         string
	clientStatus string
}

// placeRequest asks for a new allocation of a group.
type placeRequest struct {
	tg    *structs.TaskGroup
	index uint
	// previous is the failed or lost allocation being replaced.
	previous *structs.Allocation
	// reschedule adds a RescheduleTracker event with delay.
	reschedule bool
	delay      time.Duration
}

// laterRequest is a failed allocation to replace once its delay passed.
type laterRequest struct {
	alloc *structs.Allocation
	at    time.Time
}

// reconcileResult is what the scheduler turns into a plan.
type reconcileResult struct {
	stop    []stopRequest
	place   []placeRequest
	inplace []*structs.Allocation // updated copies
	later   []laterRequest
}

// entryKind is what happens to one slot (index) of a group.
type entryKind int

const (
	kindRunning         entryKind = iota // keeps running unchanged
	kindInplace                          // keeps running, takes the new job
	kindDestructive                      // stop and place anew
	kindLost                             // node down: stop as lost, place anew
	kindMigrate                          // marked to migrate (drain, alloc stop): stop, place anew
	kindRescheduleNow                    // failed: place a replacement now
	kindRescheduleLater                  // failed: replace after its delay
	kindDone                             // complete batch or out of attempts
)

type slot struct {
	kind  entryKind
	index uint
	alloc *structs.Allocation
	delay time.Duration
	at    time.Time
}

func (r *reconciler) compute() *reconcileResult {
	res := &reconcileResult{}
	if r.job == nil || r.job.Stop {
		for _, a := range r.allocs {
			if !a.TerminalStatus() {
				res.stop = append(res.stop, stopRequest{alloc: a, desc: descJobStopped})
			}
		}
		return res
	}
	byGroup := make(map[string][]*structs.Allocation)
	for _, a := range r.allocs {
		byGroup[a.TaskGroup] = append(byGroup[a.TaskGroup], a)
	}
	for _, tg := range r.job.TaskGroups {
		r.computeGroup(res, tg, byGroup[tg.Name])
		delete(byGroup, tg.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(byGroup)) {
		for _, a := range byGroup[name] {
			if !a.TerminalStatus() {
				res.stop = append(res.stop, stopRequest{alloc: a, desc: descGroupRemoved})
			}
		}
	}
	return res
}

// tainted reports whether the allocation's node is gone or down.
func (r *reconciler) tainted(a *structs.Allocation) bool {
	n := r.nodes[a.NodeID]
	return n == nil || n.Status == structs.NodeStatusDown
}

func (r *reconciler) computeGroup(res *reconcileResult, tg *structs.TaskGroup, allocs []*structs.Allocation) {
	batch := r.job.Type == structs.JobTypeBatch
	policy := reschedulePolicy(r.job, tg)
	var slots []slot
	for _, a := range allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		s := slot{index: a.Index(), alloc: a}
		switch a.ClientStatus {
		case structs.AllocClientStatusComplete:
			if !batch {
				continue // services replace finished allocations
			}
			s.kind = kindDone
		case structs.AllocClientStatusLost:
			continue
		case structs.AllocClientStatusFailed:
			if a.NextAllocation != "" {
				continue // already replaced
			}
			ft := failTime(a)
			if !rescheduleAttemptsLeft(policy, a, ft) {
				s.kind = kindDone
				break
			}
			s.delay = rescheduleDelay(policy, a)
			s.at = ft.Add(s.delay)
			if !r.now.Before(s.at) {
				s.kind = kindRescheduleNow
			} else {
				s.kind = kindRescheduleLater
			}
		default:
			switch {
			case r.tainted(a):
				s.kind = kindLost
			case a.DesiredTransition.ShouldMigrate():
				// The drainer or an alloc stop asked the alloc to move;
				// a migration is no failure, so it takes no reschedule
				// attempt.
				s.kind = kindMigrate
			case !jobChanged(a, r.job):
				s.kind = kindRunning
			case !needsDestructiveUpdate(a.Job, r.job, tg.Name) && r.inplaceOK(a, tg):
				s.kind = kindInplace
			default:
				s.kind = kindDestructive
			}
		}
		slots = append(slots, s)
	}

	// Keep the lowest indexes; among equal indexes keep what already runs.
	sort.SliceStable(slots, func(i, j int) bool {
		if slots[i].index != slots[j].index {
			return slots[i].index < slots[j].index
		}
		return slots[i].kind < slots[j].kind
	})
	keep := slots
	if len(slots) > tg.Count {
		keep = slots[:max(tg.Count, 0)]
		for _, s := range slots[len(keep):] {
			switch s.kind {
			case kindRunning, kindInplace, kindDestructive, kindMigrate:
				res.stop = append(res.stop, stopRequest{alloc: s.alloc, desc: descNotNeeded})
			case kindLost:
				res.stop = append(res.stop, stopRequest{alloc: s.alloc, desc: descLost, clientStatus: structs.AllocClientStatusLost})
			}
		}
	}

	used := make(map[uint]bool, len(keep))
	for _, s := range keep {
		used[s.index] = true
		switch s.kind {
		case kindInplace:
			u := *s.alloc
			u.Job = r.job
			u.EvalID = r.evalID
			res.inplace = append(res.inplace, &u)
		case kindDestructive:
			res.stop = append(res.stop, stopRequest{alloc: s.alloc, desc: DescUpdating})
			res.place = append(res.place, placeRequest{tg: tg, index: s.index})
		case kindLost:
			res.stop = append(res.stop, stopRequest{alloc: s.alloc, desc: descLost, clientStatus: structs.AllocClientStatusLost})
			res.place = append(res.place, placeRequest{tg: tg, index: s.index, previous: s.alloc})
		case kindMigrate:
			res.stop = append(res.stop, stopRequest{alloc: s.alloc, desc: descMigrating})
			res.place = append(res.place, placeRequest{tg: tg, index: s.index, previous: s.alloc})
		case kindRescheduleNow:
			// Stopping the failed allocation as well as linking it keeps
			// a later evaluation from replacing it twice.
			res.stop = append(res.stop, stopRequest{alloc: s.alloc, desc: descRescheduled})
			res.place = append(res.place, placeRequest{tg: tg, index: s.index, previous: s.alloc, reschedule: true, delay: s.delay})
		case kindRescheduleLater:
			if s.alloc.FollowupEvalID == "" || s.alloc.FollowupEvalID == r.evalID {
				res.later = append(res.later, laterRequest{alloc: s.alloc, at: s.at})
			}
		}
	}

	var next uint
	for missing := tg.Count - len(keep); missing > 0; missing-- {
		for used[next] {
			next++
		}
		used[next] = true
		res.place = append(res.place, placeRequest{tg: tg, index: next})
	}
}
