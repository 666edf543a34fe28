package evalbroker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nomadq/nomadq/nomad/internal/orderedheap"
	"github.com/nomadq/nomadq/structs"
)

// FailedQueue is the ready queue that holds evaluations which reached the
// delivery limit. The leader dequeues from it, marks each eval failed and
// creates a failed-follow-up eval.
const FailedQueue = "_failed"

// Broker settings Nomad ships with.
const (
	// DefaultNackTimeout is how long a dequeued eval may stay unacked
	// before it is nacked on the worker's behalf.
	DefaultNackTimeout = 60 * time.Second

	// DefaultNackInitialReenqueueDelay delays the first redelivery of a
	// nacked eval.
	DefaultNackInitialReenqueueDelay = 1 * time.Second

	// DefaultNackSubsequentReenqueueDelay is multiplied by the number of
	// earlier redeliveries to delay later ones.
	DefaultNackSubsequentReenqueueDelay = 20 * time.Second

	// DefaultDeliveryLimit is how many times an eval is handed to
	// workers before it goes to the failed queue.
	DefaultDeliveryLimit = 3
)

var (
	// ErrBrokerDisabled is returned by Dequeue when the broker is disabled,
	// which happens when this server is not (or stops being) the leader.
	ErrBrokerDisabled = errors.New("eval broker disabled")

	// ErrNotOutstanding is returned for an eval that is not dequeued.
	ErrNotOutstanding = errors.New("evaluation is not outstanding")

	// ErrTokenMismatch is returned when the token is not the one the eval
	// was dequeued with.
	ErrTokenMismatch = errors.New("evaluation token does not match")

	// ErrNackTimeoutReached is returned when the nack timer fired before
	// the worker acked or reset it; the eval is being redelivered.
	ErrNackTimeoutReached = errors.New("evaluation nack timeout reached")
)

// Stats is a snapshot of the broker's queues.
type Stats struct {
	// TotalReady counts evals waiting to be dequeued, the failed queue
	// included.
	TotalReady int
	// TotalUnacked counts evals dequeued and not yet acked or nacked.
	TotalUnacked int
	// TotalBlocked counts evals waiting behind another eval of the same job.
	TotalBlocked int
	// TotalWaiting counts evals held until their Wait, WaitUntil or nack
	// redelivery delay passes.
	TotalWaiting int
	// TotalCancelable counts superseded evals not yet taken by Cancelable.
	TotalCancelable int
	// ByScheduler breaks ready and unacked evals down by queue.
	ByScheduler map[string]*SchedulerStats
}

// SchedulerStats counts one queue's evals.
type SchedulerStats struct {
	// Ready counts the queue's evals waiting to be dequeued.
	Ready int
	// Unacked counts the queue's evals dequeued and not yet acked or
	// nacked.
	Unacked int
}

// Broker hands pending evaluations to scheduler workers. It keeps a
// ready queue per scheduler type, lets at most one eval per job be ready
// or in flight, redelivers evals that are nacked or not acked in time, and
// parks those that keep failing in the failed queue. It lives only on the
// leader and in memory; disabling it drops everything.
type Broker struct {
	nackTimeout         time.Duration
	initialNackDelay    time.Duration
	subsequentNackDelay time.Duration
	deliveryLimit       int

	mu      sync.Mutex
	enabled bool

	// epoch changes on every flush so blocked Dequeue calls can tell that
	// the broker they waited on is gone.
	epoch uint64

	// evals holds every tracked eval ID (ready, unacked, delayed, blocked
	// behind its job) with the number of times it was dequeued.
	evals map[string]int

	// jobEvals holds, per job, the ID of the one eval that is ready or
	// unacked; the others wait in pending.
	jobEvals map[structs.NamespacedID]string
	pending  map[structs.NamespacedID]*orderedheap.Heap[*structs.Evaluation]

	// cancelable holds evals superseded by a newer eval of their job.
	cancelable []*structs.Evaluation

	ready map[string]*orderedheap.Heap[*structs.Evaluation]
	unack map[string]*unackEval

	// requeue holds, per delivery token, an updated copy of the in-flight
	// eval to enqueue once that delivery is acked.
	requeue map[string]*structs.Evaluation

	delayed    *orderedheap.Heap[*delayedEval]
	delayTimer *time.Timer
	delayDue   time.Time
	delayGen   uint64

	// waiters are blocked Dequeue calls, first come first served.
	waiters []*dequeueWaiter
}

// unackEval is an eval handed to a worker.
type unackEval struct {
	eval   *structs.Evaluation
	token  string
	queue  string
	timer  *time.Timer
	paused bool
}

// delayedEval is an eval held until due.
type delayedEval struct {
	eval *structs.Evaluation
	due  time.Time
}

// dequeueWaiter is a Dequeue call waiting for an eval of its schedulers.
type dequeueWaiter struct {
	schedulers []string
	wake       chan struct{}
	signaled   bool
}

// New returns a disabled broker. nackTimeout bounds how long a
// worker may hold an eval without acking or resetting it; a nacked eval is
// redelivered after initialNackDelay the first time and after
// (n-1)*subsequentNackDelay on its n-th redelivery; after deliveryLimit
// deliveries it goes to the failed queue.
func New(nackTimeout, initialNackDelay, subsequentNackDelay time.Duration, deliveryLimit int) (*Broker, error) {
	if nackTimeout <= 0 {
		return nil, fmt.Errorf("eval broker: nack timeout must be positive, got %s", nackTimeout)
	}
	if initialNackDelay < 0 || subsequentNackDelay < 0 {
		return nil, fmt.Errorf("eval broker: nack delays must not be negative, got %s and %s", initialNackDelay, subsequentNackDelay)
	}
	if deliveryLimit < 1 {
		return nil, fmt.Errorf("eval broker: delivery limit must be at least 1, got %d", deliveryLimit)
	}
	b := &Broker{
		nackTimeout:         nackTimeout,
		initialNackDelay:    initialNackDelay,
		subsequentNackDelay: subsequentNackDelay,
		deliveryLimit:       deliveryLimit,
	}
	b.resetLocked()
	return b, nil
}

// SetEnabled turns the broker on or off. Turning it off drops every eval,
// stops every timer and makes blocked Dequeue calls return
// ErrBrokerDisabled.
func (b *Broker) SetEnabled(enabled bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.enabled = enabled
	if !enabled {
		b.flushLocked()
	}
}

// Enabled reports whether the broker accepts evals.
func (b *Broker) Enabled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.enabled
}

// Enqueue adds a pending eval. It is ignored when the broker is disabled,
// when the eval is not pending, and when an eval with the same ID is
// already tracked. An eval with Wait is held until CreateTime+Wait (or
// now+Wait when CreateTime is unset), one with WaitUntil until that time.
func (b *Broker) Enqueue(eval *structs.Evaluation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.processEnqueueLocked(eval, "")
}

// EnqueueAll adds several evals, each with the delivery token it was
// written under ("" for none). An eval whose ID is outstanding under that
// very token is an update made by the worker holding it: it is enqueued
// after that worker acks, and dropped if the worker nacks. Every other eval
// is enqueued as by Enqueue.
func (b *Broker) EnqueueAll(evals map[*structs.Evaluation]string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for eval, token := range evals {
		b.processEnqueueLocked(eval, token)
	}
}

func (b *Broker) processEnqueueLocked(eval *structs.Evaluation, token string) {
	if !b.enabled || eval == nil || eval.Status != structs.EvalStatusPending {
		return
	}
	if token != "" {
		if u, ok := b.unack[eval.ID]; ok && u.token == token {
			b.requeue[token] = eval
			return
		}
	}
	if _, ok := b.evals[eval.ID]; ok {
		return
	}
	b.evals[eval.ID] = 0
	if due, ok := dueTime(eval); ok {
		b.delayLocked(eval, due)
		return
	}
	b.enqueueLocked(eval, eval.Type)
}

// dueTime returns when a delayed eval becomes ready, and false when it is
// ready now. Wait is anchored to the eval's CreateTime so that a new leader
// does not restart the delay.
func dueTime(eval *structs.Evaluation) (time.Time, bool) {
	now := time.Now()
	var due time.Time
	if eval.Wait > 0 {
		start := now
		if eval.CreateTime > 0 {
			start = time.Unix(0, eval.CreateTime)
		}
		due = start.Add(eval.Wait)
	}
	if eval.WaitUntil.After(due) {
		due = eval.WaitUntil
	}
	return due, due.After(now)
}

// enqueueLocked makes eval ready in queue, or parks it behind the eval its
// job already has ready or in flight.
func (b *Broker) enqueueLocked(eval *structs.Evaluation, queue string) {
	if key, ok := jobKey(eval); ok {
		if cur, held := b.jobEvals[key]; held && cur != eval.ID {
			h := b.pending[key]
			if h == nil {
				h = orderedheap.New(pendingBefore)
				b.pending[key] = h
			}
			h.Push(eval)
			return
		}
		b.jobEvals[key] = eval.ID
	}
	h := b.ready[queue]
	if h == nil {
		h = orderedheap.New(readyBefore)
		b.ready[queue] = h
	}
	h.Push(eval)
	b.wakeLocked(queue)
}

// jobKey returns the job an eval belongs to; evals without a job ID are
// not serialised per job.
func jobKey(eval *structs.Evaluation) (structs.NamespacedID, bool) {
	return structs.NamespacedID{Namespace: eval.Namespace, ID: eval.JobID}, eval.JobID != ""
}

// readyBefore orders ready evals: higher priority first, then the older
// (lower CreateIndex) one.
func readyBefore(a, b *structs.Evaluation) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.CreateIndex != b.CreateIndex {
		return a.CreateIndex < b.CreateIndex
	}
	return a.ID < b.ID
}

// pendingBefore orders the evals waiting behind their job: higher priority
// first, then the newer one, which sees the latest job.
func pendingBefore(a, b *structs.Evaluation) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.ModifyIndex != b.ModifyIndex {
		return a.ModifyIndex > b.ModifyIndex
	}
	if a.CreateIndex != b.CreateIndex {
		return a.CreateIndex > b.CreateIndex
	}
	return a.ID > b.ID
}

// Dequeue hands out the best ready eval among the given schedulers
// (highest priority, then lowest CreateIndex) with a fresh token, waiting
// up to timeout for one; a timeout of 0 waits until an eval is ready or
// the broker is disabled. It returns (nil, "", nil) when the timeout
// passes and ErrBrokerDisabled when the broker is disabled.
func (b *Broker) Dequeue(schedulers []string, timeout time.Duration) (*structs.Evaluation, string, error) {
	return b.dequeue(context.Background(), schedulers, timeout)
}

// DequeueContext is Dequeue bounded by ctx instead of a timeout; it
// returns ctx.Err() when ctx ends first.
func (b *Broker) DequeueContext(ctx context.Context, schedulers []string) (*structs.Evaluation, string, error) {
	return b.dequeue(ctx, schedulers, 0)
}

func (b *Broker) dequeue(ctx context.Context, schedulers []string, timeout time.Duration) (*structs.Evaluation, string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled {
		return nil, "", ErrBrokerDisabled
	}
	epoch := b.epoch
	var deadline <-chan time.Time
	for {
		if eval, token := b.dequeueLocked(schedulers); eval != nil {
			return eval, token, nil
		}
		if timeout > 0 && deadline == nil {
			t := time.NewTimer(timeout)
			defer t.Stop()
			deadline = t.C
		}

		w := &dequeueWaiter{schedulers: schedulers, wake: make(chan struct{}, 1)}
		b.waiters = append(b.waiters, w)
		b.mu.Unlock()
		var expired bool
		select {
		case <-w.wake:
		case <-ctx.Done():
		case <-deadline:
			expired = true
		}
		b.mu.Lock()

		if b.epoch != epoch {
			return nil, "", ErrBrokerDisabled
		}
		ctxErr := ctx.Err()
		if !expired && ctxErr == nil {
			continue
		}
		if w.signaled {
			// The wake-up meant for this call would be lost; hand it on.
			for _, s := range schedulers {
				if h := b.ready[s]; h != nil && h.Len() > 0 {
					b.wakeLocked(s)
				}
			}
		} else {
			b.waiters = slices.DeleteFunc(b.waiters, func(o *dequeueWaiter) bool { return o == w })
		}
		return nil, "", ctxErr
	}
}

// dequeueLocked pops the best ready eval of the schedulers, if any, and
// makes it unacked under a new token.
func (b *Broker) dequeueLocked(schedulers []string) (*structs.Evaluation, string) {
	var best *orderedheap.Heap[*structs.Evaluation]
	var queue string
	for _, s := range schedulers {
		h := b.ready[s]
		if h == nil || h.Len() == 0 {
			continue
		}
		if best == nil || readyBefore(h.Peek(), best.Peek()) {
			best, queue = h, s
		}
	}
	if best == nil {
		return nil, ""
	}
	token := structs.GenerateUUID()
	eval := best.Pop()
	b.evals[eval.ID]++
	u := &unackEval{eval: eval, token: token, queue: queue}
	id := eval.ID
	u.timer = time.AfterFunc(b.nackTimeout, func() { b.nackExpired(id, token) })
	b.unack[id] = u
	return eval, token
}

// wakeLocked signals the longest-waiting Dequeue call that wants queue.
func (b *Broker) wakeLocked(queue string) {
	for i, w := range b.waiters {
		if slices.Contains(w.schedulers, queue) {
			b.waiters = slices.Delete(b.waiters, i, i+1)
			w.signaled = true
			w.wake <- struct{}{}
			return
		}
	}
}

// Outstanding returns the token an eval was dequeued with, if it is
// unacked.
func (b *Broker) Outstanding(evalID string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, ok := b.unack[evalID]
	if !ok {
		return "", false
	}
	return u.token, true
}

// outstandingLocked returns the unacked eval for evalID if token is its
// delivery token.
func (b *Broker) outstandingLocked(op, evalID, token string) (*unackEval, error) {
	u, ok := b.unack[evalID]
	if !ok {
		return nil, fmt.Errorf("%s evaluation %q: %w", op, evalID, ErrNotOutstanding)
	}
	if u.token != token {
		return nil, fmt.Errorf("%s evaluation %q: %w", op, evalID, ErrTokenMismatch)
	}
	return u, nil
}

// OutstandingReset restarts the nack timer of an unacked eval; workers
// call it while they are still working on the eval.
func (b *Broker) OutstandingReset(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, err := b.outstandingLocked("reset", evalID, token)
	if err != nil {
		return err
	}
	if u.paused {
		return nil
	}
	if !u.timer.Reset(b.nackTimeout) {
		u.timer.Stop()
		return fmt.Errorf("reset evaluation %q: %w", evalID, ErrNackTimeoutReached)
	}
	return nil
}

// PauseNackTimeout stops the nack timer of an unacked eval while its plan
// waits in the plan queue, where the worker cannot make progress.
func (b *Broker) PauseNackTimeout(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, err := b.outstandingLocked("pause", evalID, token)
	if err != nil {
		return err
	}
	if !u.paused && !u.timer.Stop() {
		return fmt.Errorf("pause evaluation %q: %w", evalID, ErrNackTimeoutReached)
	}
	u.paused = true
	return nil
}

// ResumeNackTimeout restarts a nack timer stopped by PauseNackTimeout with
// the full timeout.
func (b *Broker) ResumeNackTimeout(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, err := b.outstandingLocked("resume", evalID, token)
	if err != nil {
		return err
	}
	if u.paused {
		u.paused = false
		u.timer.Reset(b.nackTimeout)
	}
	return nil
}

// Ack completes an unacked eval. The next eval of its job becomes ready,
// the job's other waiting evals become cancelable, and an update the
// worker enqueued under this token is enqueued.
func (b *Broker) Ack(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, err := b.outstandingLocked("ack", evalID, token)
	if err != nil {
		return err
	}
	if !u.paused && !u.timer.Stop() {
		return fmt.Errorf("ack evaluation %q: %w", evalID, ErrNackTimeoutReached)
	}
	delete(b.unack, evalID)
	delete(b.evals, evalID)
	b.releaseJobLocked(u.eval)
	if eval, ok := b.requeue[token]; ok {
		delete(b.requeue, token)
		b.processEnqueueLocked(eval, "")
	}
	return nil
}

// releaseJobLocked frees the job slot held by eval and promotes the best
// eval waiting behind it; the others are superseded.
func (b *Broker) releaseJobLocked(eval *structs.Evaluation) {
	key, ok := jobKey(eval)
	if !ok {
		return
	}
	if b.jobEvals[key] == eval.ID {
		delete(b.jobEvals, key)
	}
	h := b.pending[key]
	if h == nil {
		return
	}
	delete(b.pending, key)
	next := h.Pop()
	for _, e := range h.Items() {
		delete(b.evals, e.ID)
		b.cancelable = append(b.cancelable, e)
	}
	b.enqueueLocked(next, next.Type)
}

// Nack returns an unacked eval to the broker: it is redelivered after the
// nack delay, or goes to the failed queue once it reached the delivery
// limit.
func (b *Broker) Nack(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, err := b.outstandingLocked("nack", evalID, token)
	if err != nil {
		return err
	}
	u.timer.Stop()
	b.nackLocked(u)
	return nil
}

// nackExpired nacks a delivery whose timer fired, unless it was acked or
// nacked in the meantime.
func (b *Broker) nackExpired(evalID, token string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if u, ok := b.unack[evalID]; ok && u.token == token {
		b.nackLocked(u)
	}
}

func (b *Broker) nackLocked(u *unackEval) {
	delete(b.unack, u.eval.ID)
	delete(b.requeue, u.token)
	deliveries := b.evals[u.eval.ID]
	if deliveries >= b.deliveryLimit {
		b.enqueueLocked(u.eval, FailedQueue)
		return
	}
	if d := b.nackDelay(deliveries); d > 0 {
		b.delayLocked(u.eval, time.Now().Add(d))
		return
	}
	b.enqueueLocked(u.eval, u.eval.Type)
}

// nackDelay is how long an eval delivered `deliveries` times waits before
// its next delivery.
func (b *Broker) nackDelay(deliveries int) time.Duration {
	switch {
	case deliveries <= 0:
		return 0
	case deliveries == 1:
		return b.initialNackDelay
	default:
		return time.Duration(deliveries-1) * b.subsequentNackDelay
	}
}

// delayLocked holds eval until due.
func (b *Broker) delayLocked(eval *structs.Evaluation, due time.Time) {
	b.delayed.Push(&delayedEval{eval: eval, due: due})
	b.armDelayLocked()
}

// armDelayLocked points the one delay timer at the earliest due eval.
func (b *Broker) armDelayLocked() {
	if b.delayed.Len() == 0 {
		b.stopDelayLocked()
		return
	}
	next := b.delayed.Peek().due
	if b.delayTimer != nil && b.delayDue.Equal(next) {
		return
	}
	b.stopDelayLocked()
	gen := b.delayGen
	b.delayDue = next
	b.delayTimer = time.AfterFunc(time.Until(next), func() { b.releaseDelayed(gen) })
}

func (b *Broker) stopDelayLocked() {
	if b.delayTimer != nil {
		b.delayTimer.Stop()
		b.delayTimer = nil
	}
	// A callback already running for the old timer sees the new generation
	// and leaves the heap alone.
	b.delayGen++
}

// releaseDelayed enqueues every delayed eval that is due.
func (b *Broker) releaseDelayed(gen uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled || gen != b.delayGen {
		return
	}
	b.delayTimer = nil
	now := time.Now()
	for b.delayed.Len() > 0 && !b.delayed.Peek().due.After(now) {
		d := b.delayed.Pop()
		b.enqueueLocked(d.eval, d.eval.Type)
	}
	b.armDelayLocked()
}

// Cancelable removes and returns up to batchSize superseded evals (all of
// them when batchSize <= 0), oldest first, for the leader to mark
// canceled.
func (b *Broker) Cancelable(batchSize int) []*structs.Evaluation {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.cancelable)
	if batchSize > 0 && batchSize < n {
		n = batchSize
	}
	if n == 0 {
		return nil
	}
	out := slices.Clone(b.cancelable[:n])
	b.cancelable = slices.Clone(b.cancelable[n:])
	return out
}

// Stats returns the sizes of the broker's queues.
func (b *Broker) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Stats{
		TotalUnacked:    len(b.unack),
		TotalWaiting:    b.delayed.Len(),
		TotalCancelable: len(b.cancelable),
		ByScheduler:     make(map[string]*SchedulerStats),
	}
	byQueue := func(q string) *SchedulerStats {
		if s.ByScheduler[q] == nil {
			s.ByScheduler[q] = &SchedulerStats{}
		}
		return s.ByScheduler[q]
	}
	for q, h := range b.ready {
		if h.Len() > 0 {
			byQueue(q).Ready = h.Len()
			s.TotalReady += h.Len()
		}
	}
	for _, u := range b.unack {
		byQueue(u.queue).Unacked++
	}
	for _, h := range b.pending {
		s.TotalBlocked += h.Len()
	}
	return s
}

// flushLocked drops every eval and timer and releases blocked Dequeue
// calls.
func (b *Broker) flushLocked() {
	for _, u := range b.unack {
		u.timer.Stop()
	}
	b.stopDelayLocked()
	for _, w := range b.waiters {
		w.signaled = true
		w.wake <- struct{}{}
	}
	b.epoch++
	b.resetLocked()
}

func (b *Broker) resetLocked() {
	b.evals = make(map[string]int)
	b.jobEvals = make(map[structs.NamespacedID]string)
	b.pending = make(map[structs.NamespacedID]*orderedheap.Heap[*structs.Evaluation])
	b.cancelable = nil
	b.ready = make(map[string]*orderedheap.Heap[*structs.Evaluation])
	b.unack = make(map[string]*unackEval)
	b.requeue = make(map[string]*structs.Evaluation)
	b.delayed = orderedheap.New(func(x, y *delayedEval) bool {
		if !x.due.Equal(y.due) {
			return x.due.Before(y.due)
		}
		return readyBefore(x.eval, y.eval)
	})
	b.waiters = nil
}
