package batchqueue

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Committer writes the queue's decisions through Raft. The FSM applying a
// release hands the eval to the eval broker, so a release is one commit.
type Committer interface {
	Release(req *structs.BatchQueueReleaseRequest) error
	Done(refs []structs.BatchQueueRef) error
}

// Config wires a Queue to the server.
type Config struct {
	State   func() *state.StateStore
	Commit  Committer
	Logger  hclog.Logger
	Metrics *metrics.Metrics // nil: no metrics
}

// Queue is the leader's batch queue shell. Run drives it; the read methods
// serve the listing and are safe for concurrent use.
type Queue struct {
	cfg Config

	mu      sync.Mutex
	view    view
	index   uint64
	changed chan struct{} // closed and replaced on every view change
}

// view is what the listing shows: the settings, queued entries (in
// release order on read) and released entries with their verdicts.
type view struct {
	settings structs.BatchQueueConfig
	queued   []*structs.BatchQueueEntry
	released []*structs.BatchQueueListEntry

	releasedRows []*structs.BatchQueueEntry // for metrics only
}

// New returns a queue; nothing runs until Run.
func New(cfg Config) *Queue {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Queue{cfg: cfg, changed: make(chan struct{})}
}

// Run rebuilds the queue from state and drives it until ctx ends. Each
// round reads the queue table and the watched jobs' evals and allocs,
// commits placements and releases, publishes the listing, then waits on
// the round's watch set or the next stall deadline. It never polls.
func (q *Queue) Run(ctx context.Context) {
	defer q.reset()
	tr := &tracker{status: make(map[string]string)}
	for ctx.Err() == nil {
		st := q.cfg.State()
		ws := memdb.NewWatchSet()
		ws.Add(st.AbandonCh())
		r, err := q.round(st, ws, tr)
		if err != nil {
			// A failed Raft commit (a timeout, a leadership change in
			// flight) is retried on the next state change or in a second.
			q.cfg.Logger.Error("batch queue round failed", "error", err)
			r.deadline = time.Now().Add(time.Second)
		}
		if r.again && err == nil {
			continue
		}
		waitCtx, cancel := context.WithCancel(ctx)
		if !r.deadline.IsZero() {
			// A stall is a timer transition: wake at the deadline.
			t := time.AfterFunc(time.Until(r.deadline), cancel)
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

// round is one pass of the shell over state.
func (q *Queue) round(st *state.StateStore, ws memdb.WatchSet, tr *tracker) (roundResult, error) {
	var res roundResult
	_, cfg, err := st.SchedulerConfigWatch(ws)
	if err != nil {
		return res, err
	}
	settings := structs.BatchQueueConfig{}
	if cfg != nil {
		settings = cfg.BatchQueue
	}
	settings.Canonicalize()
	entries, err := st.BatchQueueEntries(ws)
	if err != nil {
		return res, err
	}
	now := time.Now()
	var queued []*structs.BatchQueueEntry
	var released []*structs.BatchQueueListEntry
	var releasedRows []*structs.BatchQueueEntry
	var done []structs.BatchQueueRef
	var doneEntries []*structs.BatchQueueEntry
	placing := 0
	for _, e := range entries {
		if !e.Released() {
			queued = append(queued, e)
			continue
		}
		job, err := st.JobByID(ws, e.Namespace, e.JobID)
		if err != nil {
			return res, err
		}
		evals, err := st.EvalsByJob(ws, e.Namespace, e.JobID)
		if err != nil {
			return res, err
		}
		allocs, err := st.AllocsByJob(ws, e.Namespace, e.JobID, true)
		if err != nil {
			return res, err
		}
		v := Judge(e, job, evals, allocs, now, settings.WorkloadTimeout)
		if v.Placed {
			done = append(done, structs.BatchQueueRef{Namespace: e.Namespace, JobID: e.JobID, EvalID: e.EvalID})
			doneEntries = append(doneEntries, e)
			continue
		}
		if v.Status == structs.BatchQueueStatusPlacing {
			placing++
			if res.deadline.IsZero() || v.Deadline.Before(res.deadline) {
				res.deadline = v.Deadline
			}
		}
		released = append(released, listEntry(e, v.Status, v.Reason))
		releasedRows = append(releasedRows, e)
	}
	if !settings.Enabled {
		// The FSM drains the table when the queue is switched off; until
		// that entry applies there is nothing to do.
		q.publish(view{settings: settings}, tr)
		return res, nil
	}
	if len(done) > 0 {
		if err := q.cfg.Commit.Done(done); err != nil {
			return res, err
		}
		for _, e := range doneEntries {
			q.incr("placed")
			q.sample("placement_time", now.Sub(time.Unix(0, e.ReleaseTime)))
			tr.placed++
		}
		res.again = true
		return res, nil
	}
	if free := settings.ConcurrentPlacements - placing; free > 0 && len(queued) > 0 {
		h := NewHeap(settings.Order, queued)
		for ; free > 0 && h.Len() > 0; free-- {
			e := h.Pop()
			req := &structs.BatchQueueReleaseRequest{Namespace: e.Namespace, JobID: e.JobID, EvalID: e.EvalID, ReleaseTime: now.UnixNano()}
			if err := q.cfg.Commit.Release(req); err != nil {
				return res, err
			}
			q.incr("released")
			q.sample("wait_time", now.Sub(time.Unix(0, e.EnqueueTime)))
		}
		res.again = true
		return res, nil
	}
	q.publish(view{settings: settings, queued: queued, released: released, releasedRows: releasedRows}, tr)
	return res, nil
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
		ReleaseTime: e.ReleaseTime,
	}
}

// tracker remembers what the last published view held, so that a round
// emits counters for what changed without a per-entry map of the queued
// line (only released entries, a handful, are tracked by key).
type tracker struct {
	seeded     bool
	maxEnqueue uint64            // highest EnqueueIndex seen
	total      int               // entries in the last published view
	placed     int               // entries removed as placed since then
	status     map[string]string // released entry key -> status
}

// publish swaps in the new view, emits transition metrics and wakes
// blocking readers when anything a reader sees changed.
func (q *Queue) publish(v view, tr *tracker) {
	enq := 0
	maxE := tr.maxEnqueue
	count := func(e *structs.BatchQueueEntry) {
		if e.EnqueueIndex > tr.maxEnqueue {
			enq++
			maxE = max(maxE, e.EnqueueIndex)
		}
	}
	for _, e := range v.queued {
		count(e)
	}
	// Released entries may have entered and left the line between two
	// publishes; they count as enqueued too.
	for _, e := range v.releasedRows {
		count(e)
	}
	changed := enq > 0
	cur := make(map[string]string, len(v.released))
	for _, le := range v.released {
		k := key(le.Namespace, le.JobID)
		cur[k] = le.Status
		if p := tr.status[k]; p != le.Status {
			changed = true
			if tr.seeded && (le.Status == structs.BatchQueueStatusStalled || le.Status == structs.BatchQueueStatusConstrained) {
				q.incr(le.Status)
			}
		}
	}
	total := len(v.queued) + len(v.released)
	if tr.seeded {
		for range enq {
			q.incr("enqueued")
		}
		if removed := tr.total + enq - tr.placed - total; removed > 0 {
			for range removed {
				q.incr("removed")
			}
		}
	}
	changed = changed || total != tr.total || len(cur) != len(tr.status)
	tr.seeded, tr.maxEnqueue, tr.total, tr.placed, tr.status = true, maxE, total, 0, cur

	depth := map[string]int{structs.BatchQueueStatusQueued: len(v.queued), structs.BatchQueueStatusPlacing: 0,
		structs.BatchQueueStatusStalled: 0, structs.BatchQueueStatusConstrained: 0}
	for _, e := range v.released {
		depth[e.Status]++
	}
	if q.cfg.Metrics != nil {
		for s, n := range depth {
			q.cfg.Metrics.SetGaugeWithLabels([]string{"nomad", "batch_queue", "depth"}, float32(n), []metrics.Label{{Name: "status", Value: s}})
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if changed || q.view.settings != v.settings {
		q.index++
		close(q.changed)
		q.changed = make(chan struct{})
	}
	q.view = v
}

// reset empties the listing when the queue stops (leadership lost).
func (q *Queue) reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.view = view{}
	q.index++
	close(q.changed)
	q.changed = make(chan struct{})
}

func (q *Queue) incr(name string) {
	if q.cfg.Metrics != nil {
		q.cfg.Metrics.IncrCounter([]string{"nomad", "batch_queue", name}, 1)
	}
}

func (q *Queue) sample(name string, d time.Duration) {
	if q.cfg.Metrics != nil {
		q.cfg.Metrics.AddSample([]string{"nomad", "batch_queue", name}, float32(d.Milliseconds()))
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
// 1-based Position, then the released ones (Position 0).
func (q *Queue) List() []*structs.BatchQueueListEntry {
	q.mu.Lock()
	v := q.view
	q.mu.Unlock()
	queued := slices.Clone(v.queued)
	slices.SortFunc(queued, func(a, b *structs.BatchQueueEntry) int {
		if Less(v.settings.Order, a, b) {
			return -1
		}
		return 1
	})
	out := make([]*structs.BatchQueueListEntry, 0, len(queued)+len(v.released))
	for i, e := range queued {
		le := listEntry(e, structs.BatchQueueStatusQueued, "")
		le.Position = i + 1
		out = append(out, le)
	}
	for _, e := range v.released {
		c := *e
		out = append(out, &c)
	}
	slices.SortStableFunc(out[len(queued):], func(a, b *structs.BatchQueueListEntry) int {
		if a.ReleaseTime != b.ReleaseTime {
			if a.ReleaseTime < b.ReleaseTime {
				return -1
			}
			return 1
		}
		return 0
	})
	return out
}

// Status returns the settings, the depth by status and the placing
// workloads.
func (q *Queue) Status() structs.BatchQueueStatus {
	q.mu.Lock()
	v := q.view
	q.mu.Unlock()
	s := structs.BatchQueueStatus{
		Config: v.settings,
		Depth: map[string]int{structs.BatchQueueStatusQueued: len(v.queued), structs.BatchQueueStatusPlacing: 0,
			structs.BatchQueueStatusStalled: 0, structs.BatchQueueStatusConstrained: 0},
		Placing: []*structs.BatchQueueListEntry{},
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
