package sim

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// scheduler runs every timed step of every simulated node (heartbeats,
// task starts and exits, kills) from one heap on one goroutine, so that
// thousands of nodes cost no goroutine or timer each. Alloc state is
// only touched by functions it runs.
type scheduler struct {
	mu   sync.Mutex
	h    eventHeap
	seq  uint64
	wake chan struct{}
}

type event struct {
	at  time.Time
	seq uint64 // keeps events due at once in the order they came
	fn  func()
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].seq < h[j].seq
	}
	return h[i].at.Before(h[j].at)
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = event{}
	*h = old[:len(old)-1]
	return e
}

func newScheduler() *scheduler {
	return &scheduler{wake: make(chan struct{}, 1)}
}

// at runs fn on the scheduler goroutine at t (at once if t passed).
func (s *scheduler) at(t time.Time, fn func()) {
	s.mu.Lock()
	s.seq++
	first := len(s.h) == 0 || t.Before(s.h[0].at)
	heap.Push(&s.h, event{at: t, seq: s.seq, fn: fn})
	s.mu.Unlock()
	if first {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// after runs fn on the scheduler goroutine after d.
func (s *scheduler) after(d time.Duration, fn func()) { s.at(time.Now().Add(d), fn) }

// now runs fn on the scheduler goroutine as soon as it can.
func (s *scheduler) now(fn func()) { s.at(time.Now(), fn) }

func (s *scheduler) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var due []func()
	for {
		now := time.Now()
		wait := time.Hour
		s.mu.Lock()
		for len(s.h) > 0 && !s.h[0].at.After(now) {
			due = append(due, heap.Pop(&s.h).(event).fn)
		}
		if len(s.h) > 0 {
			wait = s.h[0].at.Sub(now)
		}
		s.mu.Unlock()
		if len(due) > 0 {
			for i, fn := range due {
				fn()
				due[i] = nil
			}
			due = due[:0]
			if ctx.Err() != nil {
				return
			}
			continue
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-s.wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		case <-ctx.Done():
			return
		}
	}
}
