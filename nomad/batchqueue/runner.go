package batchqueue

import (
	"context"
	"iter"
	"slices"
	"sync"
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
	waker    waker
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

// tracked is a released workload and what it was last judged on.
type tracked struct {
	entry   *structs.BatchQueueEntry
	ws      memdb.WatchSet // nil: judge it on the next round
	verdict Verdict
	// rebuilt marks an entry read back after a leadership change: its
	// first verdict is a recomputation, not a transition to count.
	rebuilt bool
	// unwatch ends the goroutine watching ws (nil: none runs).
	unwatch context.CancelFunc
}

// waker wakes the round when a released workload's watch set fires.
// Each released workload has its own watcher (see watch), so the round's
// watch set holds one channel for all of them instead of every
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

// watch starts the goroutine that waits on t's watch set and wakes the
// round when it fires; a watcher already running for t ends first.
func (r *runner) watch(t *tracked) {
	r.unwatch(t)
	if r.ctx == nil || t.ws == nil {
		return // a runner driven by hand (benchmarks): nothing waits
	}
	ctx, cancel := context.WithCancel(r.ctx)
	t.unwatch = cancel
	ws := t.ws
	go func() {
		if ws.WatchCtx(ctx) == nil {
			r.waker.wake()
		}
	}()
}

func (r *runner) unwatch(t *tracked) {
	if t.unwatch != nil {
		t.unwatch()
		t.unwatch = nil
	}
}

// forget stops tracking the released workload under k.
func (r *runner) forget(k string) {
	if t := r.released[k]; t != nil {
		r.unwatch(t)
		delete(r.released, k)
	}
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
	if r.settings.Order == structs.BatchQueueOrderFair {
		in.Lines = make(map[string]iter.Seq[*structs.BatchQueueEntry], len(r.lines.byNS))
		for ns, h := range r.lines.byNS {
			if h.Len() == 0 {
				delete(r.lines.byNS, ns)
				continue
			}
			in.Lines[ns] = l.from(h)
		}
	} else {
		in.Line = l.from(r.lines.one)
	}
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
	for _, e := range l.popped {
		if !slices.Contains(d.Release, e) {
			r.lines.Push(e) // pulled, not released: it keeps its place
		}
	}
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
	for k, t := range r.released {
		if t.ws == nil || rejudge || state.WatchFired(t.ws) ||
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
					r.q.incr(s)
				}
			}
			t.rebuilt = false
		}
	}
	return changed, nil
}

// line is the queued line as Plan pulls it: it pops the heap in release
// order, drops rows stopped, purged or re-enqueued since they were read
// (lazy deletion), each checked against the store, and applies the
// operators' holds and tops (Controls.Apply).
type line struct {
	r      *runner
	popped []*structs.BatchQueueEntry // the current rows popped, in order
	err    error
	// adopted is set when the line met a row released by a commit that
	// reported an error but applied: it is watched like any other and
	// holds a slot, so the line ends and the round runs again.
	adopted bool
}

// from yields h's rows in release order, holds and tops applied; the
// fair order pulls one heap per namespace. A held row is popped, not
// yielded: it keeps its place when the popped rows go back.
func (l *line) from(h *Heap) iter.Seq[*structs.BatchQueueEntry] {
	return func(yield func(*structs.BatchQueueEntry) bool) {
		for e, held := range l.r.controls.Apply(l.rows(h), l.queued) {
			if !held && !yield(e) {
				return
			}
		}
	}
}

// rows pops h's current rows in order.
func (l *line) rows(h *Heap) iter.Seq[*structs.BatchQueueEntry] {
	return func(yield func(*structs.BatchQueueEntry) bool) {
		r := l.r
		for h.Len() > 0 && l.err == nil {
			e := r.lines.pop(h)
			row, err := r.st.BatchQueueEntryByJob(nil, e.Namespace, e.JobID)
			if err != nil {
				r.lines.Push(e)
				l.err = err
				return
			}
			if row == nil || row.EnqueueIndex != e.EnqueueIndex {
				continue // stopped, purged or re-enqueued since it was read
			}
			if row.Released() {
				if k := key(row.Namespace, row.JobID); r.released[k] == nil {
					r.released[k] = &tracked{entry: row}
					l.adopted = true
					return
				}
				continue
			}
			// Popped: if the consumer stops before it, or skips it, it
			// goes back.
			l.popped = append(l.popped, row)
			if !yield(row) {
				return
			}
		}
	}
}

// queued reads the row a top names, for Apply; nil once a read failed.
func (l *line) queued(namespace, jobID string) *structs.BatchQueueEntry {
	if l.err != nil {
		return nil
	}
	row, err := l.r.st.BatchQueueEntryByJob(nil, namespace, jobID)
	if err != nil {
		l.err = err
		return nil
	}
	return row
}

// commit writes a plan's releases and removals in one Raft entry and,
// once it applied, tracks the released workloads and forgets the done
// ones.
func (r *runner) commit(d Decision, now time.Time) error {
	if len(d.Done) == 0 && len(d.Release) == 0 {
		return nil
	}
	req := &structs.BatchQueueReleaseRequest{ReleaseTime: now.UnixNano()}
	for _, w := range d.Done {
		req.Done = append(req.Done, ref(w.Entry))
	}
	for _, e := range d.Release {
		req.Release = append(req.Release, ref(e))
	}
	if err := r.q.cfg.Commit.Commit(req); err != nil {
		return err
	}
	for _, w := range d.Done {
		r.forget(key(w.Entry.Namespace, w.Entry.JobID))
		r.q.incr("placed")
		r.q.sample("placement_time", now.Sub(time.Unix(0, w.Entry.ReleaseTime())))
	}
	for _, e := range d.Release {
		r.released[key(e.Namespace, e.JobID)] = &tracked{entry: e}
		r.q.incr("released")
		r.q.sampleNS("wait_time", e.Namespace, now.Sub(time.Unix(0, e.EnqueueTime)))
	}
	for range d.Backfilled {
		r.q.incr("backfilled")
	}
	return nil
}

func ref(e *structs.BatchQueueEntry) structs.BatchQueueRef {
	return structs.BatchQueueRef{Namespace: e.Namespace, JobID: e.JobID, EvalID: e.EvalID}
}

// requeue puts popped rows back when a round fails before its commit
// applied.
func (r *runner) requeue(rows []*structs.BatchQueueEntry) {
	for _, e := range rows {
		r.lines.Push(e)
	}
}

// rebuild reads the whole queue table: on the first round of a
// leadership term, after a snapshot restore swapped the store, and when
// the order or the on/off switch changed. O(n), once.
func (r *runner) rebuild(st *state.StateStore, ws memdb.WatchSet) error {
	// Rows fed from here on may also be in the table read below; readNew
	// skips those at or below the highest index the read saw.
	r.q.takeFed(ws)
	sameStore := r.st == st
	r.st = st
	r.lines = newLines(r.settings.Order, nil)
	for _, t := range r.released {
		r.unwatch(t)
	}
	r.released = make(map[string]*tracked)
	r.last = Decision{}
	r.maxEnqueue = 0
	idx, err := st.BatchQueueTableIndex(ws)
	if err != nil {
		return err
	}
	r.tableIndex = idx
	stats, err := st.BatchQueueStats(nil)
	if err != nil {
		return err
	}
	if sameStore {
		// A settings change, switching the queue off included (its drain
		// counts as removals): count what changed since the last read.
		// A new term or a restored store starts from the stored totals.
		r.countChanges(stats)
	}
	r.stats = stats
	if !r.settings.Enabled {
		return nil
	}
	rows, err := st.BatchQueueEntries(nil)
	if err != nil {
		return err
	}
	queued := make([]*structs.BatchQueueEntry, 0, len(rows))
	for _, e := range rows {
		r.maxEnqueue = max(r.maxEnqueue, e.EnqueueIndex)
		if e.Released() {
			r.released[key(e.Namespace, e.JobID)] = &tracked{entry: e, rebuilt: true}
			continue
		}
		queued = append(queued, e)
	}
	r.lines = newLines(r.settings.Order, queued)
	return nil
}

// readNew takes in the rows fed since the last round, O(k log n) for k
// new rows, and, when the table changed, its counts. It reports whether
// the table changed at all.
func (r *runner) readNew(ws memdb.WatchSet) (bool, error) {
	for _, e := range r.q.takeFed(ws) {
		// A row at or below maxEnqueue was in the table when the heap
		// was built; if it is not there now it was removed since.
		if !r.settings.Enabled || e.EnqueueIndex <= r.maxEnqueue {
			continue
		}
		r.lines.Push(e)
	}
	idx, err := r.st.BatchQueueTableIndex(ws)
	if err != nil || idx == r.tableIndex {
		return false, err
	}
	r.tableIndex = idx
	stats, err := r.st.BatchQueueStats(nil)
	if err != nil {
		return false, err
	}
	r.countChanges(stats)
	r.stats = stats
	if !r.settings.Enabled {
		return true, nil
	}
	// Lazy deletion leaves stopped and purged rows in the heap until they
	// reach its top; when they outnumber the live ones, drop them all.
	if r.lines.Len() > 2*stats.Queued+1024 {
		return true, r.compact()
	}
	return true, nil
}

// countChanges emits the enqueue and removal counters for what the
// stored totals gained since the last read.
func (r *runner) countChanges(stats state.BatchQueueStats) {
	for range stats.Enqueued - min(stats.Enqueued, r.stats.Enqueued) {
		r.q.incr("enqueued")
	}
	for range stats.Removed - min(stats.Removed, r.stats.Removed) {
		r.q.incr("removed")
	}
}

// compact rebuilds the heap from the table's queued rows.
func (r *runner) compact() error {
	rows, err := r.st.BatchQueueEntries(nil)
	if err != nil {
		return err
	}
	queued := make([]*structs.BatchQueueEntry, 0, r.stats.Queued)
	for _, e := range rows {
		// Rows still waiting in the feed are in this read: skip them
		// when they arrive.
		r.maxEnqueue = max(r.maxEnqueue, e.EnqueueIndex)
		if !e.Released() && r.released[key(e.Namespace, e.JobID)] == nil {
			queued = append(queued, e)
		}
	}
	r.lines = newLines(r.settings.Order, queued)
	return nil
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

// buildReleased lists released workloads not yet placed as the API shows
// them, in release order: a status and reason from each verdict, and the
// reservation's reason and estimated start on the job it holds room for.
func buildReleased(pending []Workload, res *Reservation) []*structs.BatchQueueListEntry {
	out := make([]*structs.BatchQueueListEntry, 0, len(pending))
	for _, w := range pending {
		status := w.Verdict.Status
		if status == "" {
			status = structs.BatchQueueStatusPlacing // released, not judged yet
		}
		reason := w.Verdict.Reason
		switch status {
		case structs.BatchQueueStatusStalled:
			reason = ReasonStalled + ": " + reason
		case structs.BatchQueueStatusConstrained:
			reason = ReasonConstrained + ": " + reason
		}
		le := listEntry(w.Entry, status, reason)
		if res != nil && res.Entry.Namespace == w.Entry.Namespace && res.Entry.JobID == w.Entry.JobID {
			le.Reason = ReasonResources + ": " + res.Why
			if !res.Start.IsZero() {
				le.EstimatedStart = res.Start.UnixNano()
			}
		}
		out = append(out, le)
	}
	sortByRelease(out)
	return out
}
