package batchqueue

import (
	"sync"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// tracked is a released workload and what it was last judged on.
type tracked struct {
	entry   *structs.BatchQueueEntry
	ws      memdb.WatchSet // nil: judge it on the next round
	verdict Verdict
	// rebuilt marks an entry read back after a leadership change: its
	// first verdict is a recomputation, not a transition to count.
	rebuilt bool
	// watched is the watch set the runner's watchGroup waits on for
	// this workload (nil: none).
	watched memdb.WatchSet
}

// waker wakes the round when a released workload's watch set fires.
// The runner's watchGroup waits on every released workload's channels
// (see watch), so the round's watch set holds one channel for all of them instead of every
// workload's own channels; the round still tests each workload's
// channels itself, so it never judges on state newer than what it knows
// has changed.
type waker struct {
	mu sync.Mutex
	ch chan struct{} // closed by wake; nil once closed
}

func (w *waker) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
}

// add adds to ws a channel closed on the next wake.
func (w *waker) add(ws memdb.WatchSet) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	ws.Add(w.ch)
}

// watch hands t's watch set to the runner's watchGroup, in place of the
// one it watched before.
func (r *runner) watch(t *tracked) {
	if r.ctx == nil {
		return // a runner driven by hand (benchmarks): nothing waits
	}
	if r.watches == nil {
		r.watches = newWatchGroup(r.ctx, r.waker.wake)
	}
	r.watches.swap(t.watched, t.ws)
	t.watched = t.ws
}

func (r *runner) unwatch(t *tracked) {
	if t.watched != nil {
		r.watches.swap(t.watched, nil)
		t.watched = nil
	}
}

// forget stops tracking the released workload under k.
func (r *runner) forget(k string) {
	if t := r.released[k]; t != nil {
		r.unwatch(t)
		delete(r.released, k)
	}
}

// rejudge judges again the released workloads whose watch sets fired,
// whose stall deadline passed, or all of them when the timeout changed
// (all), and watches each again. It reports whether a verdict a reader
// sees changed.
func (r *runner) rejudge(now time.Time, all bool) (bool, error) {
	changed := false
	for k, t := range r.released {
		if t.ws == nil || all || state.WatchFired(t.ws) ||
			(t.verdict.Status == structs.BatchQueueStatusPlacing && !now.Before(t.verdict.Deadline)) {
			prev := t.verdict
			keep, err := r.judge(t, now)
			if err != nil {
				r.unwatch(t)
				t.ws = nil // judged again on the next round
				return false, err
			}
			if !keep {
				r.forget(k)
				changed = true
				continue
			}
			r.watch(t)
			if prev.Status != t.verdict.Status || prev.Reason != t.verdict.Reason {
				changed = true
				if s := t.verdict.Status; !t.rebuilt && (s == structs.BatchQueueStatusStalled || s == structs.BatchQueueStatusConstrained) {
					r.q.incr(verdictCounters[s])
				}
			}
			t.rebuilt = false
		}
	}
	return changed, nil
}

// judge recomputes a released workload's verdict from its row, job, evals
// and allocs, and remembers what to watch. It reports false when the
// workload is no longer released: gone from the table (stopped, purged,
// a new version) or, when the release did not apply because the entry
// changed in between, back in the line.
func (r *runner) judge(t *tracked, now time.Time) (bool, error) {
	e := t.entry
	tws := memdb.NewWatchSet()
	// The job's allocs are watched by the store's per-job channel, taken
	// before the snapshot so that no write after it goes unseen: memdb's
	// watch of a job with no allocs yet would wake on every placement.
	r.st.WatchJobAllocs(tws, e.Namespace, e.JobID)
	// One snapshot for the four reads, so the verdict sees one Raft
	// index (a job stopped between two reads is not judged placed).
	snap, err := r.st.Snapshot()
	if err != nil {
		return true, err
	}
	row, err := snap.BatchQueueEntryByJob(tws, e.Namespace, e.JobID)
	if err != nil {
		return true, err
	}
	if row == nil {
		return false, nil
	}
	if !row.Released() {
		if row.EnqueueIndex == e.EnqueueIndex {
			r.lines.Push(row)
		}
		return false, nil
	}
	job, err := snap.JobByID(tws, row.Namespace, row.JobID)
	if err != nil {
		return true, err
	}
	evals, err := snap.EvalsByJob(tws, row.Namespace, row.JobID)
	if err != nil {
		return true, err
	}
	allocs, err := snap.AllocsByJob(nil, row.Namespace, row.JobID, true)
	if err != nil {
		return true, err
	}
	t.entry, t.ws = row, tws
	t.verdict = Judge(row, job, evals, allocs, now, r.settings.WorkloadTimeout)
	return true, nil
}
