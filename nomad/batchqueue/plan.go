package batchqueue

import (
	"iter"
	"slices"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// Input is what the release policy decides on: the configuration, the
// released workloads with their verdicts, the queued line and, for the
// fair order and backfill, the cluster's capacity.
type Input struct {
	Config structs.BatchQueueConfig

	// Now is the round's time; backfill measures max_run_duration
	// deadlines from it.
	Now time.Time

	// Released are the released workloads, each with its current verdict.
	Released []Workload

	// Line yields the queued entries in release order (see Less) for the
	// fifo and priority orders. Plan pulls only as many as it considers,
	// so a round costs O(k log n) for k entries considered, not O(n); an
	// entry pulled and not released keeps its place, as do the ones
	// never pulled.
	Line iter.Seq[*structs.BatchQueueEntry]

	// Lines yields each namespace's queued entries in priority order, for
	// the fair order. Pulled the same way as Line.
	Lines map[string]iter.Seq[*structs.BatchQueueEntry]

	// Shares are the namespaces' weights and caps; a namespace absent
	// from it has weight 1 and no caps.
	Shares map[string]structs.BatchQueueShare

	// Cluster is the capacity and its use, read from Raft state.
	Cluster Cluster

	// Topped reports whether an operator topped a queued entry, for the
	// multifactor order, which ranks the line itself. Nil: none is.
	Topped func(*structs.BatchQueueEntry) bool

	// Resets are the namespaces' usage reset times, for the multifactor
	// order: usage before them does not count.
	Resets map[string]time.Time

	// Demand tells what a queued entry's job asks for. Plan calls it only
	// for the entries it considers. Nil: every job asks for nothing and
	// has no max_run_duration.
	Demand func(*structs.BatchQueueEntry) Demand
}

// Demand is what a workload asks of the cluster.
type Demand struct {
	// Ask is the sum of every wanted alloc's resources.
	Ask structs.ComparableResources
	// Allocs is the number of wanted allocs.
	Allocs int
	// MaxRun is the longest max_run_duration of the job's groups, or 0
	// when any group has none: the workload's allocs all end within
	// MaxRun of their placement.
	MaxRun time.Duration
}

// Cluster is the cluster's capacity and its use, from Raft state.
type Cluster struct {
	// Total is the capacity of the nodes that take new allocs (ready and
	// eligible: a draining or ineligible node is not capacity).
	Total structs.ComparableResources
	// Used is what the live allocs on those nodes hold.
	Used structs.ComparableResources
	// Timed are the live allocs on those nodes that have a
	// max_run_duration deadline, sorted by End.
	Timed []TimedAlloc
	// Usage is what each namespace's live batch allocs hold, on any node.
	Usage map[string]Usage
	// Spans are each namespace's batch alloc runs, for the multifactor
	// order's decayed usage.
	Spans map[string][]Span
	// Folded is each namespace's usage of garbage-collected batch allocs,
	// read fresh each round (a reset clears it without moving the allocs).
	Folded map[string]structs.BatchQueueFoldedUsage
}

// TimedAlloc is a live alloc whose max_run_duration deadline is known.
type TimedAlloc struct {
	End time.Time
	Res structs.ComparableResources
}

// Usage is what one namespace's live batch allocs hold.
type Usage struct {
	Res    structs.ComparableResources
	Allocs int
}

// Workload is a released entry and its verdict.
type Workload struct {
	Entry   *structs.BatchQueueEntry
	Verdict Verdict
}

// Decision is the release policy's decision for one round.
type Decision struct {
	// Release are the queued entries to release now, in release order.
	Release []*structs.BatchQueueEntry

	// Backfilled are the entries of Release that run ahead of the
	// reservation.
	Backfilled []*structs.BatchQueueEntry

	// Done are the released workloads that leave the queue, each with
	// why (the verdict's reason).
	Done []Workload

	// Placing counts the workloads that hold a slot: placing, not
	// stalled, constrained, reserved or done, and not counting Release.
	Placing int

	// Reservation is the workload waiting for capacity that the line
	// keeps room for, nil when none.
	Reservation *Reservation

	// Limited are the namespaces that a cap held back this round.
	Limited map[string]bool

	// WatchCapacity means that entries were held back for want of
	// capacity (a reservation, a namespace's running cap): plan again
	// when allocs or nodes change.
	WatchCapacity bool

	// Wake is the earliest stall deadline of a placing workload, when
	// the plan must be made again even if state does not change; zero
	// when none.
	Wake time.Time

	// Line is what a multifactor round saw of the line, for the metrics;
	// nil when the round did not rank it.
	Line *LineStats
}

// Reservation is capacity the line keeps for a released workload that
// the scheduler could not place for want of room.
type Reservation struct {
	Entry *structs.BatchQueueEntry
	// Need is what its allocs still to place ask for.
	Need structs.ComparableResources
	// Start is the shadow time: the earliest time at which enough live
	// allocs reach their max_run_duration deadlines for the workload's
	// missing allocs to fit. Zero when it cannot be known (the capacity
	// it needs is held by allocs with no deadline): then the workload
	// keeps its slot, as without backfill, and nothing jumps it.
	Start time.Time
	// Why says, for the listing, why the workload waits.
	Why string
}

// Why a workload waits for capacity.
const (
	WhyReserved   = "waiting for capacity: reserved from the max_run_duration deadlines of running allocations"
	WhyNoDeadline = "waiting for capacity: the allocations holding it have no max_run_duration, so no start can be reserved"
)

// backfillDepth bounds how many entries behind a reservation a round
// tries, so that a long line of jobs that cannot backfill costs a
// round no more than this many demand reads.
const backfillDepth = 256

// Plan is the queue's release policy, a pure function of its input:
// released workloads that are placed are done; placing ones hold a slot
// each, stalled and constrained ones none; the slots left of
// ConcurrentPlacements go to the head of the line, in order (fifo,
// priority) or to the head of the namespace with the smallest weighted
// share (fair), or to the entries of highest effective priority
// (multifactor). With backfill on, the earliest released workload the
// scheduler could not place for want of capacity holds a reservation
// instead of a slot, and only entries whose max_run_duration ends before
// its start (or that fit beside it) are released ahead of it.
func Plan(in Input) Decision {
	var p Decision
	placing := map[string]int{}
	var waiting []Workload
	for _, w := range in.Released {
		switch {
		case w.Verdict.Placed:
			p.Done = append(p.Done, w)
		case in.Config.Backfill && w.Verdict.Exhausted &&
			(w.Verdict.Status == structs.BatchQueueStatusPlacing || w.Verdict.Status == structs.BatchQueueStatusStalled):
			waiting = append(waiting, w)
		case w.Verdict.Status == structs.BatchQueueStatusPlacing:
			p.hold(w, placing)
		}
	}
	var res *reserved
	if head := firstReleased(waiting); head != nil {
		res = reserve(Pending(in.Cluster, in.Released, head.Entry, in.Now), head.Verdict.Missing, in.Now)
		p.Reservation = &Reservation{Entry: head.Entry, Need: head.Verdict.Missing, Start: res.start, Why: WhyReserved}
		if res.start.IsZero() {
			// No deadline frees the room: the head waits as without
			// backfill, and so does the line.
			p.Reservation.Why = WhyNoDeadline
			res = nil
		}
		for _, w := range waiting {
			// Only the reserved workload gives its slot up; the others
			// wait as without backfill.
			if (res == nil || w.Entry != head.Entry) && w.Verdict.Status == structs.BatchQueueStatusPlacing {
				p.hold(w, placing)
			}
		}
	}
	free := in.Config.ConcurrentPlacements - p.Placing
	if free <= 0 {
		return p
	}
	demand := in.Demand
	if demand == nil {
		demand = func(*structs.BatchQueueEntry) Demand { return Demand{} }
	}
	if in.Config.Order == structs.BatchQueueOrderFair {
		p.fair(in, demand, res, placing, free)
	} else if in.Config.Order == structs.BatchQueueOrderMultifactor && in.Line != nil {
		p.multifactor(in, demand, res, placing, free)
	} else if in.Line != nil {
		p.inOrder(in, demand, res, free)
	}
	p.WatchCapacity = p.WatchCapacity || res != nil
	return p
}

// Pending returns the cluster as it will be once the released workloads
// that are still placing have their allocs: what each misses counts as
// used now and, when it has a max_run_duration, as ending that long from
// now. Without it a workload released by one round and not yet placed
// would look like free room to the next round's backfill. Workloads the
// scheduler found no room for (and skip, the reserved one) do not count:
// they cannot place before room frees.
func Pending(c Cluster, released []Workload, skip *structs.BatchQueueEntry, now time.Time) Cluster {
	copied := false
	for _, w := range released {
		v := w.Verdict
		if v.Placed || v.Exhausted || w.Entry == skip || v.Status != structs.BatchQueueStatusPlacing ||
			(v.Missing == structs.ComparableResources{}) {
			continue
		}
		if !copied {
			c.Timed = slices.Clone(c.Timed)
			copied = true
		}
		c.Used.Add(v.Missing)
		if v.MaxRun > 0 {
			t := TimedAlloc{End: now.Add(v.MaxRun), Res: v.Missing}
			i, _ := slices.BinarySearchFunc(c.Timed, t, func(a, b TimedAlloc) int { return a.End.Compare(b.End) })
			c.Timed = slices.Insert(c.Timed, i, t)
		}
	}
	return c
}

// hold counts a placing workload's slot.
func (p *Decision) hold(w Workload, placing map[string]int) {
	p.Placing++
	placing[w.Entry.Namespace]++
	if p.Wake.IsZero() || w.Verdict.Deadline.Before(p.Wake) {
		p.Wake = w.Verdict.Deadline
	}
}

// firstReleased is the workload released first (by Raft index).
func firstReleased(ws []Workload) *Workload {
	var first *Workload
	for i := range ws {
		if first == nil || ws[i].Entry.ReleaseIndex() < first.Entry.ReleaseIndex() {
			first = &ws[i]
		}
	}
	return first
}

// inOrder releases from the single line: its head while nothing is
// reserved, and then only what may backfill.
func (p *Decision) inOrder(in Input, demand func(*structs.BatchQueueEntry) Demand, res *reserved, free int) {
	tried := 0
	for e := range in.Line {
		if res != nil {
			if tried >= backfillDepth {
				return
			}
			tried++
			if !res.admit(demand(e), in.Now) {
				continue
			}
			p.Backfilled = append(p.Backfilled, e)
		}
		p.Release = append(p.Release, e)
		if free--; free == 0 {
			return
		}
	}
}

// reserved is the room a reservation leaves to backfill.
type reserved struct {
	start time.Time
	// now is the capacity free now, less what backfilled workloads took.
	now structs.ComparableResources
	// spare is what stays free at start once the reserved workload has
	// what it needs, less what backfilled workloads that outlive start
	// took.
	spare structs.ComparableResources
}

// reserve computes the shadow time of a workload missing need: walk the
// timed allocs by deadline, freeing their resources, until need fits.
// The zero start means it never does from deadlines alone.
func reserve(c Cluster, need structs.ComparableResources, now time.Time) *reserved {
	free := minus(c.Total, c.Used)
	r := &reserved{now: free}
	if fits(free, need) {
		// The scheduler found no node with room although the sum has
		// some (fragmentation): the reservation starts now, so only
		// what fits beside it may run.
		r.start, r.spare = now, minus(free, need)
		return r
	}
	for _, t := range c.Timed {
		free.Add(t.Res)
		if fits(free, need) {
			r.start, r.spare = t.End, minus(free, need)
			if r.start.Before(now) {
				r.start = now // a deadline passed and the alloc is still ending
			}
			return r
		}
	}
	return r
}

// admit reports whether a workload may run ahead of the reservation and
// takes its room: it must fit now, have a deadline on every group, and
// end before the reserved start or fit in the room the reserved workload
// does not need. A workload without max_run_duration never jumps.
func (r *reserved) admit(d Demand, now time.Time) bool {
	if d.MaxRun <= 0 || !fits(r.now, d.Ask) {
		return false
	}
	if end := now.Add(d.MaxRun); end.After(r.start) {
		if !fits(r.spare, d.Ask) {
			return false
		}
		r.spare = minus(r.spare, d.Ask)
	}
	r.now = minus(r.now, d.Ask)
	return true
}

func fits(have, want structs.ComparableResources) bool {
	ok, _ := have.Superset(want)
	return ok
}

func minus(a, b structs.ComparableResources) structs.ComparableResources {
	return structs.ComparableResources{CPU: a.CPU - b.CPU, MemoryMB: a.MemoryMB - b.MemoryMB, DiskMB: a.DiskMB - b.DiskMB}
}
