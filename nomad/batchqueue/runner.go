package batchqueue

import (
	"context"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// runner is the state Run keeps between rounds. The heap holds the
// queued rows as the queue last read them; a row stopped, purged or
// replaced since is found out when it reaches the top (lazy deletion),
// so no round walks the line.
type runner struct {
	q *Queue
	// ctx is Run's: the released workloads' watchers end with it.
	ctx context.Context
	// waker wakes the round when a released workload's watch fires.
	waker waker
	// watches waits on the released workloads' watch sets with a
	// bounded number of goroutines (nil until the first watch).
	watches  *watchGroup
	st       *state.StateStore // the store the heap was built from
	settings structs.BatchQueueConfig

	lines      *lines
	maxEnqueue uint64 // highest EnqueueIndex of the last full read: fed rows at or below it were in that read
	tableIndex uint64 // the queue table's index at the last read
	stats      state.BatchQueueStats

	released  map[string]*tracked // released rows by key(ns, job)
	workloads []Workload          // the plan's input, reused between rounds

	capacity capacity // the cluster read, for the fair order and backfill

	// controls are the operators' holds and tops, read again when the
	// control table moves.
	controls    Controls
	controlsIdx uint64
	last        Decision // the last round's decision, for the listing
	// reservedSince is when the current reservation was first seen, for
	// its age gauge.
	reservedSince time.Time
	// at is the time of the current round; a published view keeps it,
	// and the listing's estimates count from it, so they move only when
	// the queue index does.
	at time.Time
}

func newRunner(ctx context.Context, q *Queue) *runner {
	return &runner{q: q, ctx: ctx}
}

// round is one pass: read what changed in state, plan, commit.
func (r *runner) round(ws memdb.WatchSet, now time.Time) (roundResult, error) {
	var res roundResult
	r.at = now
	changed, err := r.read(ws, now)
	if err != nil {
		return res, err
	}
	if !r.settings.Enabled {
		// The FSM drains the table in the entry that switches the queue
		// off; there is nothing to release or watch.
		if changed {
			r.publish()
		}
		return res, nil
	}

	r.workloads = r.workloads[:0]
	for _, t := range r.released {
		r.workloads = append(r.workloads, Workload{Entry: t.entry, Verdict: t.verdict})
	}
	l := &line{r: r}
	in := Input{Config: r.settings, Now: now, Released: r.workloads, Demand: r.demand}
	l.feed(&in)
	if r.settings.Order == structs.BatchQueueOrderFair || r.settings.Backfill {
		if err := r.capacity.read(r.st); err != nil {
			return res, err
		}
		in.Cluster, in.Shares = r.capacity.cluster, r.capacity.shares
	}
	d := Plan(in)
	res.deadline = d.Wake
	if l.err != nil {
		r.requeue(l.popped)
		return res, l.err
	}
	l.keep(d.Release)
	if d.WatchCapacity || r.settings.Order == structs.BatchQueueOrderFair {
		if err := r.capacity.watch(r.st, ws, d.WatchCapacity); err != nil {
			return res, err
		}
	}
	if r.noteDecision(d, now) {
		changed = true
	}
	if l.adopted {
		res.again, changed = true, true
	}
	if err := r.commit(d, now); err != nil {
		r.requeue(d.Release)
		return res, err
	}
	if len(d.Done) > 0 || len(d.Release) > 0 {
		res.again, changed = true, true
	}
	if changed {
		r.publish()
	}
	return res, nil
}

// read brings the runner up to date with state: the settings, new and
// removed rows of the queue table, and the verdicts of released
// workloads whose evals or allocs changed or whose stall deadline
// passed. It adds to ws everything the next round waits on, and reports
// whether anything a reader sees changed.
func (r *runner) read(ws memdb.WatchSet, now time.Time) (bool, error) {
	st := r.q.cfg.State()
	ws.Add(st.AbandonCh())
	_, cfg, err := st.SchedulerConfigWatch(ws)
	if err != nil {
		return false, err
	}
	settings := structs.BatchQueueConfig{}
	if cfg != nil {
		settings = cfg.BatchQueue
	}
	settings.Canonicalize()
	changed := settings != r.settings || st != r.st
	rejudge := settings.WorkloadTimeout != r.settings.WorkloadTimeout
	rebuild := st != r.st || settings.Enabled != r.settings.Enabled || settings.Order != r.settings.Order
	r.settings = settings
	if rebuild {
		if err := r.rebuild(st, ws); err != nil {
			r.st = nil
			return false, err
		}
	} else {
		fresh, err := r.readNew(ws)
		if err != nil {
			return false, err
		}
		changed = changed || fresh
	}
	if !settings.Enabled {
		return changed, nil
	}
	if fresh, err := r.readControls(ws, rebuild); err != nil {
		return false, err
	} else if fresh {
		changed = true
	}
	r.waker.add(ws)
	fresh, err := r.rejudge(now, rejudge)
	if err != nil {
		return false, err
	}
	return changed || fresh, nil
}

// publish hands readers the current settings and released workloads and
// wakes blocking queries.
func (r *runner) publish() {
	v := view{settings: r.settings, store: r.st,
		reservation: r.last.Reservation, limited: r.last.Limited, pending: make([]Workload, 0, len(r.released)),
		reservedSince: r.reservedSince, at: r.at, controls: r.controls}
	for _, t := range r.released {
		if t.verdict.Placed {
			continue
		}
		v.pending = append(v.pending, Workload{Entry: t.entry, Verdict: t.verdict})
	}
	v.released = new(releasedList)
	r.q.publish(v)
}
