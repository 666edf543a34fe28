package nodedrain

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// drainPlan is what the drainer should do now, decided from state and the
// time alone (see planDrains); the drainer shell commits it.
type drainPlan struct {
	// migrate are the allocations to mark for migration now.
	migrate []*structs.Allocation
	// complete are the nodes whose drain ends now, with whether it ends
	// because the deadline passed.
	complete map[string]bool
	// wake is the next instant at which the plan may change without any
	// state change (a deadline, a replacement turning healthy); zero when
	// there is none.
	wake time.Time
}

func (p *drainPlan) wakeAt(t time.Time) {
	if p.wake.IsZero() || t.Before(p.wake) {
		p.wake = t
	}
}

// planDrains decides, for every draining node, which allocations leave it
// now and whether its drain is over:
//
//   - at the deadline every allocation still running is marked for
//     migration and the drain completes (system allocations stay when
//     IgnoreSystemJobs);
//   - before it, service allocations are marked a group at a time per the
//     group's migrate block: at most max_parallel of a group are in
//     flight, and an allocation counts as healthy again once its tasks
//     have run for min_healthy_time;
//   - batch and sysbatch allocations run on until the deadline;
//   - system allocations leave last, once nothing else runs on the node;
//   - a node with nothing left to move completes its drain.
//
// Every read adds to ws, so the drainer wakes when any input changes.
func planDrains(ws memdb.WatchSet, st *state.StateStore, now time.Time) (*drainPlan, error) {
	p := &drainPlan{complete: make(map[string]bool)}
	nodes, err := st.Nodes(ws)
	if err != nil {
		return nil, err
	}
	draining := make(map[string]*structs.Node)
	for _, n := range nodes {
		if n.DrainStrategy != nil {
			draining[n.ID] = n
		}
	}
	// Groups with allocations to move off draining nodes before the
	// deadline; they are decided together, across nodes, because
	// max_parallel counts the whole group.
	groups := make(map[groupKey][]*structs.Allocation)
	for _, id := range slices.Sorted(maps.Keys(draining)) {
		n := draining[id]
		allocs, err := st.AllocsByNode(ws, id)
		if err != nil {
			return nil, err
		}
		hasDeadline, deadline := n.DrainStrategy.DeadlineTime()
		deadlined := hasDeadline && !now.Before(deadline)
		var remaining, system []*structs.Allocation
		for _, a := range allocs {
			if a.ClientTerminalStatus() {
				continue
			}
			switch jobType(a) {
			case structs.JobTypeSystem:
				if !n.DrainStrategy.IgnoreSystemJobs {
					system = append(system, a)
				}
			default:
				remaining = append(remaining, a)
			}
		}
		switch {
		case deadlined:
			for _, a := range append(remaining, system...) {
				if movable(a) {
					p.migrate = append(p.migrate, a)
				}
			}
			p.complete[id] = true
		case len(remaining) == 0 && len(system) == 0:
			p.complete[id] = false
		case len(remaining) == 0:
			if hasDeadline {
				p.wakeAt(deadline)
			}
			for _, a := range system {
				if movable(a) {
					p.migrate = append(p.migrate, a)
				}
			}
		default:
			if hasDeadline {
				p.wakeAt(deadline)
			}
			for _, a := range remaining {
				if jobType(a) == structs.JobTypeService && movable(a) {
					k := groupKey{a.Namespace, a.JobID, a.TaskGroup}
					groups[k] = append(groups[k], a)
				}
			}
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(groups), groupKey.compare) {
		picked, err := pickMigrations(ws, st, k, groups[k], now, p)
		if err != nil {
			return nil, err
		}
		p.migrate = append(p.migrate, picked...)
	}
	return p, nil
}

type groupKey struct{ namespace, job, group string }

// compare orders group keys by namespace, then job, then group.
func (a groupKey) compare(b groupKey) int {
	return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.job, b.job), cmp.Compare(a.group, b.group))
}

// movable reports whether an allocation still runs where it is and has
// not been asked to move yet.
func movable(a *structs.Allocation) bool {
	return a.DesiredStatus == structs.AllocDesiredStatusRun && !a.DesiredTransition.ShouldMigrate()
}

func jobType(a *structs.Allocation) string {
	if a.Job == nil {
		return ""
	}
	return a.Job.Type
}

// pickMigrations chooses which of a service group's allocations on
// draining nodes (candidates) move now: as many as keep at least
// count - max_parallel of the group healthy.
func pickMigrations(ws memdb.WatchSet, st *state.StateStore, k groupKey, candidates []*structs.Allocation,
	now time.Time, p *drainPlan) ([]*structs.Allocation, error) {
	job, err := st.JobByID(ws, k.namespace, k.job)
	if err != nil {
		return nil, err
	}
	if job == nil || job.Stop {
		// The job is going away; its allocations stop without help.
		return nil, nil
	}
	tg := job.LookupTaskGroup(k.group)
	if tg == nil {
		return nil, nil
	}
	migrate := tg.Migrate
	if migrate == nil {
		migrate = structs.DefaultMigrateStrategy()
	}
	all, err := st.AllocsByJob(ws, k.namespace, k.job, false)
	if err != nil {
		return nil, fmt.Errorf("allocations of job %q: %w", k.job, err)
	}
	healthy := 0
	for _, a := range all {
		if a.TaskGroup != k.group || !movable(a) {
			continue
		}
		ok, at := healthySince(a, migrate.MinHealthyTime, now)
		switch {
		case ok:
			healthy++
		case !at.IsZero():
			p.wakeAt(at)
		}
	}
	n := min(len(candidates), healthy-(tg.Count-migrate.MaxParallel))
	if n <= 0 {
		return nil, nil
	}
	sort.Slice(candidates, func(i, j int) bool { return candidates[i].ID < candidates[j].ID })
	return candidates[:n], nil
}

// healthySince reports whether an allocation counts as healthy for a
// migration: running, with every task running for at least minHealthy.
// When it runs but not yet long enough, it also returns when it will.
func healthySince(a *structs.Allocation, minHealthy time.Duration, now time.Time) (bool, time.Time) {
	if a.ClientStatus != structs.AllocClientStatusRunning {
		return false, time.Time{}
	}
	var latest time.Time
	for _, ts := range a.TaskStates {
		if ts.State != structs.TaskStateRunning {
			return false, time.Time{}
		}
		if ts.StartedAt.After(latest) {
			latest = ts.StartedAt
		}
	}
	ready := latest.Add(minHealthy)
	if now.Before(ready) {
		return false, ready
	}
	return true, time.Time{}
}
