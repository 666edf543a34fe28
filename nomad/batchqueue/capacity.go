package batchqueue

import (
	"slices"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// capacity is the cluster as the fair order and backfill see it, read
// from one state snapshot and read again only when the allocs, nodes or
// namespaces tables moved, so a round that changes none of them costs
// nothing here.
type capacity struct {
	st                    *state.StateStore
	allocs, nodes, spaces uint64 // the tables' indexes at the read

	cluster Cluster
	shares  map[string]structs.BatchQueueShare
}

// read brings the cluster up to date with st.
func (c *capacity) read(st *state.StateStore) error {
	snap, err := st.Snapshot()
	if err != nil {
		return err
	}
	ai, err := snap.Index(state.TableAllocs)
	if err != nil {
		return err
	}
	ni, err := snap.Index(state.TableNodes)
	if err != nil {
		return err
	}
	si, err := snap.Index(state.TableNamespaces)
	if err != nil {
		return err
	}
	if c.st == st && c.allocs == ai && c.nodes == ni && c.spaces == si {
		return nil
	}
	cluster, shares, err := ReadCluster(snap)
	if err != nil {
		return err
	}
	*c = capacity{st: st, allocs: ai, nodes: ni, spaces: si, cluster: cluster, shares: shares}
	return nil
}

// watch adds to ws the tables whose change may let a held entry go:
// allocs and nodes when capacity held one back, namespaces (weights,
// caps) always.
func (c *capacity) watch(st *state.StateStore, ws memdb.WatchSet, capacity bool) error {
	tables := []string{state.TableNamespaces}
	if capacity {
		tables = append(tables, state.TableAllocs, state.TableNodes)
	}
	for _, t := range tables {
		if _, err := st.TableIndexWatch(ws, t); err != nil {
			return err
		}
	}
	return nil
}

// ReadCluster reads the cluster's capacity, its use and the namespaces'
// fair-share settings from a state snapshot. A node counts as capacity
// only while it is ready and eligible, so a draining or ineligible node
// holds no room the queue could reserve. A namespace whose meta does not
// parse (written before the keys were checked) keeps the defaults.
func ReadCluster(snap *state.StateSnapshot) (Cluster, map[string]structs.BatchQueueShare, error) {
	c := Cluster{Usage: map[string]Usage{}}
	nodes, err := snap.Nodes(nil)
	if err != nil {
		return c, nil, err
	}
	ready := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if n.Ready() {
			ready[n.ID] = true
			c.Total.Add(n.Comparable())
		}
	}
	allocs, err := snap.AllocsAnyOrder(nil)
	if err != nil {
		return c, nil, err
	}
	for _, a := range allocs {
		if a.Job != nil && a.Job.Type == structs.JobTypeBatch {
			c.addSpan(a)
		}
		if a.TerminalStatus() {
			continue
		}
		res := a.Usage()
		if ready[a.NodeID] {
			c.Used.Add(res)
			if end, ok := a.MaxRunDeadline(); ok {
				c.Timed = append(c.Timed, TimedAlloc{End: end, Res: res})
			}
		}
		if a.Job != nil && a.Job.Type == structs.JobTypeBatch {
			u := c.Usage[a.Namespace]
			u.Res.Add(res)
			u.Allocs++
			c.Usage[a.Namespace] = u
		}
	}
	slices.SortFunc(c.Timed, func(a, b TimedAlloc) int { return a.End.Compare(b.End) })
	spaces, err := snap.NamespacesByNamePrefix(nil, "")
	if err != nil {
		return c, nil, err
	}
	shares := make(map[string]structs.BatchQueueShare, len(spaces))
	for _, ns := range spaces {
		if s, err := structs.BatchQueueShareOf(ns.Meta); err == nil {
			shares[ns.Name] = s
		}
	}
	return c, shares, nil
}

// DemandOf is what a job asks of the cluster: every wanted alloc's
// resources, their count, and the longest max_run_duration of its groups
// (0 when a group has none).
func DemandOf(job *structs.Job) Demand {
	var d Demand
	if job == nil {
		return d
	}
	timed := true
	for _, tg := range job.TaskGroups {
		ask := tg.Ask()
		n := int64(tg.Count)
		d.Ask.Add(structs.ComparableResources{CPU: ask.CPU * n, MemoryMB: ask.MemoryMB * n, DiskMB: ask.DiskMB * n})
		d.Allocs += tg.Count
		if tg.MaxRunDuration == nil {
			timed = false
		} else {
			d.MaxRun = max(d.MaxRun, *tg.MaxRunDuration)
		}
	}
	if !timed {
		d.MaxRun = 0
	}
	return d
}

// demand reads a queued entry's job from the store the line was read
// from.
func (r *runner) demand(e *structs.BatchQueueEntry) Demand {
	job, err := r.st.JobByID(nil, e.Namespace, e.JobID)
	if err != nil {
		return Demand{}
	}
	return DemandOf(job)
}

// noteDecision keeps what the listing shows of a round's decision (the
// reservation and since when it is held, the capped namespaces). It
// reports whether a reader would see a change.
func (r *runner) noteDecision(d Decision, now time.Time) bool {
	prev := r.last
	r.last = Decision{Reservation: d.Reservation, Limited: d.Limited}
	switch {
	case d.Reservation == nil:
		r.reservedSince = time.Time{}
	case prev.Reservation == nil || prev.Reservation.Entry.JobID != d.Reservation.Entry.JobID ||
		prev.Reservation.Entry.Namespace != d.Reservation.Entry.Namespace:
		r.reservedSince = now
	}
	return !sameReservation(prev.Reservation, d.Reservation) || !sameSet(prev.Limited, d.Limited)
}

func sameReservation(a, b *Reservation) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Entry.Namespace == b.Entry.Namespace && a.Entry.JobID == b.Entry.JobID && a.Start.Equal(b.Start) && a.Why == b.Why
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
