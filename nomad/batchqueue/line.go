package batchqueue

import (
	"iter"
	"slices"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// lines holds the queued rows in release order: one heap for the fifo
// and priority orders, one heap per namespace (in priority order) for
// the fair order, which picks between namespace heads each release.
type lines struct {
	fair bool
	one  *Heap
	byNS map[string]*Heap
	n    int
}

func newLines(order string, entries []*structs.BatchQueueEntry) *lines {
	if order != structs.BatchQueueOrderFair {
		return &lines{one: NewHeap(order, entries), n: len(entries)}
	}
	l := &lines{fair: true, byNS: map[string]*Heap{}}
	split := map[string][]*structs.BatchQueueEntry{}
	for _, e := range entries {
		split[e.Namespace] = append(split[e.Namespace], e)
	}
	for ns, es := range split {
		l.byNS[ns] = NewHeap(structs.BatchQueueOrderPriority, es)
	}
	l.n = len(entries)
	return l
}

// Len is the number of rows held, stale ones included.
func (l *lines) Len() int { return l.n }

// Push adds a row to its line.
func (l *lines) Push(e *structs.BatchQueueEntry) {
	l.n++
	if !l.fair {
		l.one.Push(e)
		return
	}
	h := l.byNS[e.Namespace]
	if h == nil {
		h = NewHeap(structs.BatchQueueOrderPriority, nil)
		l.byNS[e.Namespace] = h
	}
	h.Push(e)
}

// pop removes the next row of h.
func (l *lines) pop(h *Heap) *structs.BatchQueueEntry {
	e := h.Pop()
	if e != nil {
		l.n--
	}
	return e
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

// feed sets in's line to pull from the heaps: Line for the fifo and
// priority orders, Lines (one per namespace with rows) for the fair order.
func (l *line) feed(in *Input) {
	r := l.r
	if r.settings.Order == structs.BatchQueueOrderMultifactor {
		// The multifactor order ranks the line by the cluster's usage and
		// sizes whether or not backfill reads them.
		in.Topped = r.controls.Topped
		if err := r.capacity.read(r.st); err != nil {
			l.err = err
		}
		in.Cluster, in.Shares = r.capacity.cluster, r.capacity.shares
		resets, err := r.st.BatchQueueUsageResets(nil)
		if err != nil {
			l.err = err
		}
		in.Resets = resets
		folded, err := r.st.BatchQueueUsageFolded(nil)
		if err != nil {
			l.err = err
		}
		in.Cluster.Folded = folded
	}
	if r.settings.Order != structs.BatchQueueOrderFair {
		in.Line = l.from(r.lines.one)
		return
	}
	in.Lines = make(map[string]iter.Seq[*structs.BatchQueueEntry], len(r.lines.byNS))
	for ns, h := range r.lines.byNS {
		if h.Len() == 0 {
			delete(r.lines.byNS, ns)
			continue
		}
		in.Lines[ns] = l.from(h)
	}
}

// keep pushes back the rows the plan pulled and did not release: they
// keep their place.
func (l *line) keep(released []*structs.BatchQueueEntry) {
	for _, e := range l.popped {
		if !slices.Contains(released, e) {
			l.r.lines.Push(e)
		}
	}
}

// commit writes a plan's releases and removals in one Raft entry and,
// once it applied, tracks the released workloads and forgets the done
// ones.
func (r *runner) commit(d Decision, now time.Time) error {
	r.q.lineGauges(d.Line)
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
		r.q.incr(metricPlaced)
		r.q.sample(metricPlacementTime, now.Sub(time.Unix(0, w.Entry.ReleaseTime())).Seconds())
	}
	for _, e := range d.Release {
		r.released[key(e.Namespace, e.JobID)] = &tracked{entry: e}
		r.q.incr(metricReleased)
		r.q.sampleNS(metricWaitTime, e.Namespace, now.Sub(time.Unix(0, e.EnqueueTime)).Seconds())
	}
	for range d.Backfilled {
		r.q.incr(metricBackfilled)
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
		r.q.incr(metricEnqueued)
	}
	for range stats.Removed - min(stats.Removed, r.stats.Removed) {
		r.q.incr(metricRemoved)
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
