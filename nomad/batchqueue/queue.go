package batchqueue

import (
	"context"
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
	store    *state.StateStore // nil while the queue does not run
	// released lists the released workloads not yet placed, built from
	// pending on first use (see releasedList); nil for an empty view.
	released *releasedList

	// reservation and limited are the last round's, for the reasons and
	// estimates of the listing.
	reservation *Reservation
	limited     map[string]bool
	// pending are the released workloads with their verdicts, whose
	// allocs still to place the estimates count (see Pending).
	pending []Workload
	// reservedSince is when the reservation was first held (this leader's
	// clock); at is the time of the round that published the view.
	reservedSince time.Time
	at            time.Time
	// controls are the operators' holds and tops.
	controls Controls
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
	r := newRunner(ctx, q)
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

// releasedList holds a view's listing of its released workloads. A
// round publishes a view after every change, up to a thousand times a
// second with jobs arriving, while the listing is read only by the API
// and the queue's metrics; so the listing is built from the view's
// pending workloads and reservation once, by its first reader. Neither
// changes after publishing: entries are the store's rows, verdicts and
// the pending slice are the round's copies.
type releasedList struct {
	once    sync.Once
	entries []*structs.BatchQueueListEntry // in release order
}

// releasedEntries returns the view's released workloads not yet placed,
// in release order. Callers copy an entry before changing it.
func (v view) releasedEntries() []*structs.BatchQueueListEntry {
	l := v.released
	if l == nil {
		return nil
	}
	l.once.Do(func() { l.entries = buildReleased(v.pending, v.reservation) })
	return l.entries
}

func (q *Queue) current() view {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.view
}

// readerView is the view a listing reads: the last round's, with the
// operators' holds and tops read from the store now, so that a hold or
// release answered to a client shows in the next listing (read your
// writes) rather than after the leader's next round.
func (q *Queue) readerView() view {
	v := q.current()
	if v.store == nil {
		return v
	}
	controls, err := v.store.BatchQueueControls(nil)
	if err != nil {
		q.cfg.Logger.Error("batch queue listing: reading the holds and tops failed", "error", err)
		return v
	}
	v.controls = NewControls(controls)
	return v
}

// ReservationAge is how long the current reservation has been held, 0
// when there is none, for a scrape-time gauge.
func (q *Queue) ReservationAge(now time.Time) time.Duration {
	v := q.current()
	if v.reservation == nil || v.reservedSince.IsZero() {
		return 0
	}
	return now.Sub(v.reservedSince)
}

// Shares returns each namespace's weighted dominant share of the cluster
// (see Share), for the namespaces that run batch allocs, read from state
// at call time for a scrape-time gauge; nil while the queue does not run.
func (q *Queue) Shares() map[string]float64 {
	v := q.current()
	if v.store == nil || !v.settings.Enabled {
		return nil
	}
	c, shares := q.readCluster(v)
	out := make(map[string]float64, len(c.Usage))
	for ns, u := range c.Usage {
		out[ns] = Share(u.Res, c.Total, shareOf(shares, ns).Weight)
	}
	return out
}

// QueuedByNamespace counts the queued entries of each namespace, one pass
// over the queue table, for a scrape-time gauge; nil while the queue
// does not run.
func (q *Queue) QueuedByNamespace() map[string]int {
	v := q.current()
	if v.store == nil || !v.settings.Enabled {
		return nil
	}
	out := map[string]int{}
	err := v.store.BatchQueueEach(func(e *structs.BatchQueueEntry) {
		if !e.Released() {
			out[e.Namespace]++
		}
	})
	if err != nil {
		return nil
	}
	return out
}

// Index returns the leader-local queue index, which moves on every change
// a reader can see, and a channel closed at the next change.
func (q *Queue) Index() (uint64, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.index, q.changed
}
