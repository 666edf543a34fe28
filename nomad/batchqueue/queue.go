package batchqueue

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Committer writes the queue's decisions through Raft. The FSM applying
// a round removes the placed entries and hands the released evals to the
// eval broker, so a round is one commit.
type Committer interface {
	Commit(req *structs.BatchQueueReleaseRequest) error
}

// Config wires a Queue to the server.
type Config struct {
	State   func() *state.StateStore
	Commit  Committer
	Logger  hclog.Logger
	Metrics *metrics.Metrics // nil: no metrics
}

// Queue is the leader's batch queue. Run drives it; the read methods
// serve the listing and are safe for concurrent use.
type Queue struct {
	cfg Config

	mu      sync.Mutex
	view    view
	index   uint64
	changed chan struct{} // closed and replaced on every view change

	// The feed: rows the FSM added to the queue table, waiting for the
	// next round. Collected only while Run runs.
	feedMu     sync.Mutex
	collecting bool
	fed        []*structs.BatchQueueEntry
	fedCh      chan struct{} // closed when rows arrive; nil once closed
}

// view is what readers see, published by Run after each round that
// changed anything. The queued line is not copied into it: readers take
// it from the state store, so a round costs nothing per queued entry.
type view struct {
	settings structs.BatchQueueConfig
	store    *state.StateStore              // nil while the queue does not run
	released []*structs.BatchQueueListEntry // in release order
}

// New returns a queue; nothing runs until Run.
func New(cfg Config) *Queue {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Queue{cfg: cfg, changed: make(chan struct{})}
}

// Run rebuilds the queue from state and drives it until ctx ends. Each
// round reads what changed since the last one (new rows of the queue
// table, the watched jobs' evals and allocs), commits placements and
// releases in one Raft entry, then waits on the round's watch set or the
// next stall deadline. It never polls.
func (q *Queue) Run(ctx context.Context) {
	q.collect(true)
	defer q.reset()
	defer q.collect(false)
	r := &runner{q: q}
	for ctx.Err() == nil {
		ws := memdb.NewWatchSet()
		res, err := r.round(ws, time.Now())
		if err != nil {
			// A failed Raft commit (a timeout, a leadership change in
			// flight) is retried on the next state change or in a second.
			q.cfg.Logger.Error("batch queue round failed", "error", err)
			res = roundResult{deadline: time.Now().Add(time.Second)}
		}
		if res.again {
			continue
		}
		waitCtx, cancel := context.WithCancel(ctx)
		if !res.deadline.IsZero() {
			// A stall is a timer transition: wake at the deadline.
			t := time.AfterFunc(time.Until(res.deadline), cancel)
			_ = ws.WatchCtx(waitCtx)
			t.Stop()
		} else {
			_ = ws.WatchCtx(waitCtx)
		}
		cancel()
	}
}

// roundResult tells Run what to do next.
type roundResult struct {
	again    bool      // state was written: read it again at once
	deadline time.Time // earliest stall deadline of a placing workload
}

func key(ns, id string) string { return ns + "\x00" + id }

// Feed takes the rows an FSM apply added to the queue table. It never
// blocks and costs O(k): the rows wait in a list for the next round,
// whatever the depth of the queue. Outside Run (on followers, or before
// the first round of a leadership term) they are dropped, since a round
// that starts reads the whole table.
func (q *Queue) Feed(rows []*structs.BatchQueueEntry) {
	q.feedMu.Lock()
	defer q.feedMu.Unlock()
	if !q.collecting {
		return
	}
	q.fed = append(q.fed, rows...)
	if q.fedCh != nil {
		close(q.fedCh)
		q.fedCh = nil
	}
}

func (q *Queue) collect(on bool) {
	q.feedMu.Lock()
	defer q.feedMu.Unlock()
	q.collecting, q.fed, q.fedCh = on, nil, nil
}

// takeFed returns the rows fed since the last call and adds to ws a
// channel closed when more arrive.
func (q *Queue) takeFed(ws memdb.WatchSet) []*structs.BatchQueueEntry {
	q.feedMu.Lock()
	defer q.feedMu.Unlock()
	rows := q.fed
	q.fed = nil
	if q.fedCh == nil {
		q.fedCh = make(chan struct{})
	}
	ws.Add(q.fedCh)
	return rows
}

// runner is the state Run keeps between rounds. The heap holds the
// queued rows as the queue last read them; a row stopped, purged or
// replaced since is found out when it reaches the top (lazy deletion),
// so no round walks the line.
type runner struct {
	q        *Queue
	st       *state.StateStore // the store the heap was built from
	settings structs.BatchQueueConfig

	heap       *Heap
	maxEnqueue uint64 // highest EnqueueIndex of the last full read: fed rows at or below it were in that read
	tableIndex uint64 // the queue table's index at the last read
	stats      state.BatchQueueStats

	released map[string]*tracked // released rows by key(ns, job)
}

// tracked is a released workload and what it was last judged on.
type tracked struct {
	entry   *structs.BatchQueueEntry
	ws      memdb.WatchSet // nil: judge it on the next round
	verdict Verdict
	// rebuilt marks an entry read back after a leadership change: its
	// first verdict is a recomputation, not a transition to count.
	rebuilt bool
}

// round is one pass over what changed in state.
func (r *runner) round(ws memdb.WatchSet, now time.Time) (roundResult, error) {
	var res roundResult
	st := r.q.cfg.State()
	ws.Add(st.AbandonCh())
	_, cfg, err := st.SchedulerConfigWatch(ws)
	if err != nil {
		return res, err
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
			return res, err
		}
	} else {
		fresh, err := r.readNew(ws)
		if err != nil {
			return res, err
		}
		changed = changed || fresh
	}
	if !settings.Enabled {
		// The FSM drains the table in the entry that switches the queue
		// off; there is nothing to release or watch.
		if changed {
			r.publish()
		}
		return res, nil
	}

	var done []*tracked
	placing := 0
	for k, t := range r.released {
		if t.ws == nil || rejudge || state.WatchFired(t.ws) ||
			(t.verdict.Status == structs.BatchQueueStatusPlacing && !now.Before(t.verdict.Deadline)) {
			prev := t.verdict
			keep, err := r.judge(t, now)
			if err != nil {
				return res, err
			}
			if !keep {
				delete(r.released, k)
				changed = true
				continue
			}
			if prev.Status != t.verdict.Status || prev.Reason != t.verdict.Reason {
				changed = true
				if s := t.verdict.Status; !t.rebuilt && (s == structs.BatchQueueStatusStalled || s == structs.BatchQueueStatusConstrained) {
					r.q.incr(s)
				}
			}
			t.rebuilt = false
		}
		for ch := range t.ws {
			ws.Add(ch)
		}
		switch {
		case t.verdict.Placed:
			done = append(done, t)
		case t.verdict.Status == structs.BatchQueueStatusPlacing:
			placing++
			if res.deadline.IsZero() || t.verdict.Deadline.Before(res.deadline) {
				res.deadline = t.verdict.Deadline
			}
		}
	}

	var release []*structs.BatchQueueEntry
	for free := settings.ConcurrentPlacements - placing; free > 0 && r.heap.Len() > 0; {
		e := r.heap.Pop()
		row, err := st.BatchQueueEntryByJob(nil, e.Namespace, e.JobID)
		if err != nil {
			r.heap.Push(e)
			r.requeue(release)
			return res, err
		}
		if row == nil || row.EnqueueIndex != e.EnqueueIndex {
			continue // stopped, purged or re-enqueued since it was read
		}
		if row.Released() {
			// A release whose commit reported an error but applied:
			// watch it like any other, it holds a slot.
			if k := key(row.Namespace, row.JobID); r.released[k] == nil {
				r.released[k] = &tracked{entry: row}
				res.again, changed = true, true
				break
			}
			continue
		}
		release = append(release, row)
		free--
	}
	if len(done) > 0 || len(release) > 0 {
		req := &structs.BatchQueueReleaseRequest{ReleaseTime: now.UnixNano()}
		for _, t := range done {
			req.Done = append(req.Done, ref(t.entry))
		}
		for _, e := range release {
			req.Release = append(req.Release, ref(e))
		}
		if err := r.q.cfg.Commit.Commit(req); err != nil {
			r.requeue(release)
			return res, err
		}
		for _, t := range done {
			delete(r.released, key(t.entry.Namespace, t.entry.JobID))
			r.q.incr("placed")
			r.q.sample("placement_time", now.Sub(time.Unix(0, t.entry.ReleaseTime())))
		}
		for _, e := range release {
			r.released[key(e.Namespace, e.JobID)] = &tracked{entry: e}
			r.q.incr("released")
			r.q.sample("wait_time", now.Sub(time.Unix(0, e.EnqueueTime)))
		}
		res.again = true
		changed = true
	}
	if changed {
		r.publish()
	}
	return res, nil
}

func ref(e *structs.BatchQueueEntry) structs.BatchQueueRef {
	return structs.BatchQueueRef{Namespace: e.Namespace, JobID: e.JobID, EvalID: e.EvalID}
}

// requeue puts popped rows back after a failed commit.
func (r *runner) requeue(rows []*structs.BatchQueueEntry) {
	for _, e := range rows {
		r.heap.Push(e)
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
	r.heap = NewHeap(r.settings.Order, nil)
	r.released = make(map[string]*tracked)
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
	r.heap = NewHeap(r.settings.Order, queued)
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
		r.heap.Push(e)
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
	if r.heap.Len() > 2*stats.Queued+1024 {
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
	r.heap = NewHeap(r.settings.Order, queued)
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
			r.heap.Push(row)
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
	allocs, err := snap.AllocsByJob(tws, row.Namespace, row.JobID, true)
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
	v := view{settings: r.settings, store: r.st, released: make([]*structs.BatchQueueListEntry, 0, len(r.released))}
	for _, t := range r.released {
		if t.verdict.Placed {
			continue
		}
		status := t.verdict.Status
		if status == "" {
			status = structs.BatchQueueStatusPlacing // released, not judged yet
		}
		v.released = append(v.released, listEntry(t.entry, status, t.verdict.Reason))
	}
	sortByRelease(v.released)
	r.q.publish(v)
}

func sortByRelease(entries []*structs.BatchQueueListEntry) {
	slices.SortFunc(entries, func(a, b *structs.BatchQueueListEntry) int {
		if c := cmp.Compare(a.ReleaseTime, b.ReleaseTime); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return cmp.Compare(a.JobID, b.JobID)
	})
}

func listEntry(e *structs.BatchQueueEntry, status, reason string) *structs.BatchQueueListEntry {
	return &structs.BatchQueueListEntry{
		Namespace:   e.Namespace,
		JobID:       e.JobID,
		EvalID:      e.EvalID,
		Priority:    e.Priority,
		Status:      status,
		Reason:      reason,
		EnqueueTime: e.EnqueueTime,
		ReleaseTime: e.ReleaseTime(),
	}
}

// publish swaps in a new view and wakes blocking readers: the queue index
// moves on every change a reader can see.
func (q *Queue) publish(v view) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.view = v
	q.index++
	close(q.changed)
	q.changed = make(chan struct{})
}

// reset empties the listing when the queue stops (leadership lost).
func (q *Queue) reset() { q.publish(view{}) }

func (q *Queue) current() view {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.view
}

// The queue's series are new, so they follow Prometheus naming: counters
// end in _total and durations are seconds, named so.

func (q *Queue) incr(name string) {
	if q.cfg.Metrics != nil {
		q.cfg.Metrics.IncrCounter([]string{"nomad", "batch_queue", name + "_total"}, 1)
	}
}

func (q *Queue) sample(name string, d time.Duration) {
	if q.cfg.Metrics != nil {
		q.cfg.Metrics.AddSample([]string{"nomad", "batch_queue", name + "_seconds"}, float32(d.Seconds()))
	}
}

// Index returns the leader-local queue index, which moves on every change
// a reader can see, and a channel closed at the next change.
func (q *Queue) Index() (uint64, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.index, q.changed
}

// List returns every entry: queued ones first in release order with their
// 1-based Position, then the released ones (Position 0) in release order.
// The queued line is read from the state store and sorted here, so its
// cost falls on the reader, not on the queue's rounds.
func (q *Queue) List() []*structs.BatchQueueListEntry {
	entries, _ := q.ListWithTokens()
	return entries
}

// ListWithTokens is List with each entry's page token: a string that
// sorts like the listing and stays put as the queue moves, so a client
// paging through a queue that releases or loses entries between pages
// skips none (one released in between moves to the released part and
// can show twice). A queued entry's token is its sort key,
// a released one's its release time; names are hex-encoded so that the
// separators sort below every name byte.
func (q *Queue) ListWithTokens() ([]*structs.BatchQueueListEntry, []string) {
	v := q.current()
	out := make([]*structs.BatchQueueListEntry, 0, len(v.released))
	if v.store == nil || !v.settings.Enabled {
		return out, nil
	}
	rows, err := v.store.BatchQueueEntries(nil)
	if err != nil {
		q.cfg.Logger.Error("batch queue listing failed", "error", err)
		return out, nil
	}
	known := make(map[string]*structs.BatchQueueListEntry, len(v.released))
	for _, e := range v.released {
		known[key(e.Namespace, e.JobID)] = e
	}
	var queued []*structs.BatchQueueEntry
	var released []*structs.BatchQueueListEntry
	for _, e := range rows {
		switch le := known[key(e.Namespace, e.JobID)]; {
		case !e.Released():
			queued = append(queued, e)
		case le != nil:
			c := *le
			released = append(released, &c)
		default:
			// Released by a commit the queue has not read back yet.
			released = append(released, listEntry(e, structs.BatchQueueStatusPlacing, ""))
		}
	}
	slices.SortFunc(queued, func(a, b *structs.BatchQueueEntry) int {
		if Less(v.settings.Order, a, b) {
			return -1
		}
		return 1
	})
	tokens := make([]string, 0, len(queued)+len(released))
	for i, e := range queued {
		le := listEntry(e, structs.BatchQueueStatusQueued, "")
		le.Position = i + 1
		out = append(out, le)
		prio := 0
		if v.settings.Order == structs.BatchQueueOrderPriority {
			prio = math.MaxInt32 - e.Priority
		}
		tokens = append(tokens, fmt.Sprintf("q-%010d-%020d-%x-%x", prio, e.EnqueueIndex, e.Namespace, e.JobID))
	}
	sortByRelease(released)
	for _, e := range released {
		tokens = append(tokens, fmt.Sprintf("r-%020d-%x-%x", e.ReleaseTime, e.Namespace, e.JobID))
	}
	return append(out, released...), tokens
}

// Lookup returns one job's entry, or nil when the job is not in the
// queue. A queued job's Position is the number of queued entries that
// sort before it, plus one: one pass over the table, O(n) with no sort
// and no copy, so a client polling its own job's position costs little
// however long the line.
func (q *Queue) Lookup(namespace, jobID string) *structs.BatchQueueListEntry {
	v := q.current()
	if v.store == nil || !v.settings.Enabled {
		return nil
	}
	for _, e := range v.released {
		if e.Namespace == namespace && e.JobID == jobID {
			c := *e
			return &c
		}
	}
	row, err := v.store.BatchQueueEntryByJob(nil, namespace, jobID)
	if err != nil || row == nil {
		return nil
	}
	if row.Released() {
		return listEntry(row, structs.BatchQueueStatusPlacing, "")
	}
	le := listEntry(row, structs.BatchQueueStatusQueued, "")
	le.Position = 1
	err = v.store.BatchQueueEach(func(e *structs.BatchQueueEntry) {
		if !e.Released() && Less(v.settings.Order, e, row) {
			le.Position++
		}
	})
	if err != nil {
		q.cfg.Logger.Error("batch queue lookup failed", "error", err)
		return nil
	}
	return le
}

// Status returns the settings, the depth by status and the placing
// workloads.
func (q *Queue) Status() structs.BatchQueueStatus {
	v := q.current()
	s := structs.BatchQueueStatus{
		Config: v.settings,
		Depth: map[string]int{structs.BatchQueueStatusQueued: 0, structs.BatchQueueStatusPlacing: 0,
			structs.BatchQueueStatusStalled: 0, structs.BatchQueueStatusConstrained: 0},
		Placing: []*structs.BatchQueueListEntry{},
	}
	if v.store != nil && v.settings.Enabled {
		if stats, err := v.store.BatchQueueStats(nil); err == nil {
			s.Depth[structs.BatchQueueStatusQueued] = stats.Queued
		}
	}
	for _, e := range v.released {
		s.Depth[e.Status]++
		if e.Status == structs.BatchQueueStatusPlacing {
			c := *e
			s.Placing = append(s.Placing, &c)
		}
	}
	return s
}
