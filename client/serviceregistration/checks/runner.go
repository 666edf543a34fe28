package checks

import (
	"context"
	"sync"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// Observer is told each run's outcome of a check (for check_restart).
type Observer func(s Spec, o Outcome)

// Runner runs the checks of one alloc, each on its interval, and keeps
// the latest result of each.
type Runner struct {
	checker *Checker
	observe Observer

	mu        sync.Mutex
	results   map[string]*structs.CheckQueryResult
	observers map[string]context.CancelFunc
	stopped   bool
	wg        sync.WaitGroup
}

// NewRunner returns a runner that reports each run to observe (may be
// nil).
func NewRunner(checker *Checker, observe Observer) *Runner {
	if checker == nil {
		checker = NewChecker()
	}
	return &Runner{
		checker:   checker,
		observe:   observe,
		results:   make(map[string]*structs.CheckQueryResult),
		observers: make(map[string]context.CancelFunc),
	}
}

// Sync runs exactly the checks of specs: it starts those not running and
// stops (and forgets) those no longer listed.
func (r *Runner) Sync(specs []Spec) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	keep := make(map[string]bool, len(specs))
	for _, s := range specs {
		keep[s.ID] = true
		if _, ok := r.observers[s.ID]; ok {
			continue
		}
		r.results[s.ID] = &structs.CheckQueryResult{
			ID:        s.ID,
			Mode:      Mode(s.Check),
			Status:    StatusPending,
			Output:    "nomad: waiting to run",
			Timestamp: time.Now().Unix(),
			Group:     s.Group,
			Task:      s.Task,
			Service:   s.Service,
			Check:     s.Check.Name,
		}
		ctx, cancel := context.WithCancel(context.Background())
		r.observers[s.ID] = cancel
		r.wg.Add(1)
		go r.loop(ctx, s)
	}
	for id, cancel := range r.observers {
		if !keep[id] {
			cancel()
			delete(r.observers, id)
			delete(r.results, id)
		}
	}
}

// Results returns a copy of the latest result of each check, by ID.
func (r *Runner) Results() map[string]*structs.CheckQueryResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]*structs.CheckQueryResult, len(r.results))
	for id, res := range r.results {
		c := *res
		out[id] = &c
	}
	return out
}

// Stop ends every check and forgets the results.
func (r *Runner) Stop() {
	r.mu.Lock()
	r.stopped = true
	for _, cancel := range r.observers {
		cancel()
	}
	r.observers = map[string]context.CancelFunc{}
	r.results = map[string]*structs.CheckQueryResult{}
	r.mu.Unlock()
	r.wg.Wait()
}

// loop runs one check: first after half its interval, as Nomad does, then
// every interval.
func (r *Runner) loop(ctx context.Context, s Spec) {
	defer r.wg.Done()
	interval := s.Check.Interval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	t := time.NewTimer(interval / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		o := r.checker.Do(ctx, s)
		if ctx.Err() != nil {
			return
		}
		r.record(s, o)
		if r.observe != nil {
			r.observe(s, o)
		}
		t.Reset(interval)
	}
}

func (r *Runner) record(s Spec, o Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.results[s.ID]
	if !ok {
		return
	}
	c := *res
	c.Timestamp = time.Now().Unix()
	c.Status, c.StatusCode, c.Output = o.Status, o.StatusCode, o.Output
	r.results[s.ID] = &c
}
