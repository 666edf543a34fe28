package planqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/nomadq/nomadq/nomad/internal/orderedheap"
	"github.com/nomadq/nomadq/structs"
)

// ErrDisabled is returned by the plan queue, and by the futures
// of the plans it held, when it is disabled because this server is not
// (or stops being) the leader.
var ErrDisabled = errors.New("plan queue disabled")

// Future is the answer to a submitted plan.
type Future interface {
	// Wait blocks until the plan applier responds and returns its answer,
	// or until ctx ends: a submitter must never outlive its leadership
	// waiting for an applier that has already stopped.
	Wait(ctx context.Context) (*structs.PlanResult, error)
	// Commit is the future of the plan's Raft entry when the answer came
	// before the entry was applied: the submitter must wait for it (and
	// check its response) before treating the plan as committed.
	Commit() raft.ApplyFuture
}

// Stats is a snapshot of the plan queue.
type Stats struct {
	// Depth counts plans waiting for the applier.
	Depth int
}

// Pending is a plan waiting in, or taken from, the plan queue. It is
// the future its submitter waits on.
type Pending struct {
	// Plan is the submitted plan.
	Plan *structs.Plan
	// EnqueueTime is when the plan was queued.
	EnqueueTime time.Time

	seq    uint64
	once   sync.Once
	done   chan struct{}
	result *structs.PlanResult
	commit raft.ApplyFuture
	err    error
}

// Wait blocks until Respond or RespondCommit is called and returns what
// it was given, or until ctx ends. A plan abandoned this way may still be
// applied; the eval's token check and the worker's nack keep that safe.
func (p *Pending) Wait(ctx context.Context) (*structs.PlanResult, error) {
	select {
	case <-p.done:
		return p.result, p.err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the plan applier: %w", ctx.Err())
	}
}

// Respond answers the plan's submitter; only the first answer counts.
func (p *Pending) Respond(result *structs.PlanResult, err error) {
	p.RespondCommit(result, nil, err)
}

// RespondCommit is Respond with the future of the plan's Raft entry when
// the entry is still being applied (nil once it is), which Commit then
// returns to the submitter.
func (p *Pending) RespondCommit(result *structs.PlanResult, commit raft.ApplyFuture, err error) {
	p.once.Do(func() {
		p.result, p.commit, p.err = result, commit, err
		close(p.done)
	})
}

// Commit is the future of the plan's Raft entry when the applier answered
// before the entry was applied (a plan that fits in full), nil otherwise.
// Valid once Wait has returned the answer.
func (p *Pending) Commit() raft.ApplyFuture {
	select {
	case <-p.done:
		return p.commit
	default:
		return nil
	}
}

// Queue orders submitted plans for the single plan applier: higher
// plan priority first, then first submitted first. It lives only on the
// leader and in memory.
type Queue struct {
	mu      sync.Mutex
	enabled bool
	plans   *orderedheap.Heap[*Pending]
	seq     uint64

	// epoch changes on every disable so that a Dequeue blocked across a
	// disable and re-enable still returns ErrDisabled.
	epoch uint64

	// added is closed and replaced whenever a plan is enqueued or the
	// queue is disabled, waking blocked Dequeue calls.
	added chan struct{}
}

// New returns a disabled plan queue.
func New() *Queue {
	q := &Queue{added: make(chan struct{})}
	q.plans = newPlanHeap()
	return q
}

func newPlanHeap() *orderedheap.Heap[*Pending] {
	return orderedheap.New(func(a, b *Pending) bool {
		if a.Plan.Priority != b.Plan.Priority {
			return a.Plan.Priority > b.Plan.Priority
		}
		return a.seq < b.seq
	})
}

// SetEnabled turns the queue on or off. Turning it off answers every
// queued plan with ErrDisabled and releases blocked Dequeue calls.
func (q *Queue) SetEnabled(enabled bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.enabled = enabled
	if enabled {
		return
	}
	for _, p := range q.plans.Items() {
		p.Respond(nil, ErrDisabled)
	}
	q.plans = newPlanHeap()
	q.epoch++
	q.notifyLocked()
}

// Enabled reports whether the queue accepts plans.
func (q *Queue) Enabled() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.enabled
}

// Enqueue queues a plan for the applier and returns the future its answer
// arrives on.
func (q *Queue) Enqueue(plan *structs.Plan) (Future, error) {
	if plan == nil {
		return nil, errors.New("enqueue plan: plan is nil")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.enabled {
		return nil, ErrDisabled
	}
	q.seq++
	p := &Pending{
		Plan:        plan,
		EnqueueTime: time.Now(),
		seq:         q.seq,
		done:        make(chan struct{}),
	}
	q.plans.Push(p)
	q.notifyLocked()
	return p, nil
}

func (q *Queue) notifyLocked() {
	close(q.added)
	q.added = make(chan struct{})
}

// Dequeue takes the next plan, waiting up to timeout for one; a timeout
// of 0 waits until a plan arrives or the queue is disabled. It returns
// (nil, nil) when the timeout passes and ErrDisabled when the
// queue is disabled.
func (q *Queue) Dequeue(timeout time.Duration) (*Pending, error) {
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	q.mu.Lock()
	epoch := q.epoch
	q.mu.Unlock()
	for {
		q.mu.Lock()
		if !q.enabled || q.epoch != epoch {
			q.mu.Unlock()
			return nil, ErrDisabled
		}
		if q.plans.Len() > 0 {
			p := q.plans.Pop()
			q.mu.Unlock()
			return p, nil
		}
		added := q.added
		q.mu.Unlock()
		select {
		case <-added:
		case <-deadline:
			return nil, nil
		}
	}
}

// Stats returns the queue depth.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return Stats{Depth: q.plans.Len()}
}
