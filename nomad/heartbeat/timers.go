package heartbeat

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Timers tracks one expiry timer per node on the leader. It is a small
// component of its own so its timing can be tested in fake time.
type Timers struct {
	minTTL       time.Duration
	maxPerSecond float64
	grace        time.Duration

	// stagger returns a random duration in [0, d); tests inject their own.
	stagger func(d time.Duration) time.Duration

	// expire is called, without the lock, when a node's timer fires.
	expire func(nodeID string)

	mu     sync.Mutex
	timers map[string]*time.Timer
}

// NewTimers returns Timers that hand out TTLs of at least minTTL, longer
// as nodes grow so that they heartbeat about maxPerSecond times a second
// in all, and that call expire with a node's ID once it has been silent
// for its TTL plus grace.
func NewTimers(minTTL time.Duration, maxPerSecond float64, grace time.Duration, expire func(string)) *Timers {
	return &Timers{
		minTTL:       minTTL,
		maxPerSecond: maxPerSecond,
		grace:        grace,
		stagger:      func(d time.Duration) time.Duration { return time.Duration(rand.Int64N(int64(d))) },
		expire:       expire,
		timers:       make(map[string]*time.Timer),
	}
}

// Reset (re)arms the node's timer and returns the TTL to hand the client:
// max(minTTL, nodes/maxPerSecond) plus a random stagger of up to that, so
// heartbeats spread out. The node is expired after TTL + grace.
func (h *Timers) Reset(nodeID string) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	base := h.minTTL
	if h.maxPerSecond > 0 {
		if d := time.Duration(float64(len(h.timers)) / h.maxPerSecond * float64(time.Second)); d > base {
			base = d
		}
	}
	ttl := base + h.stagger(base)
	h.arm(nodeID, ttl+h.grace)
	return ttl
}

// ResetTo arms the node's timer to expire after exactly d (failover grace).
func (h *Timers) ResetTo(nodeID string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.arm(nodeID, d)
}

func (h *Timers) arm(nodeID string, d time.Duration) {
	if t, ok := h.timers[nodeID]; ok {
		t.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		h.mu.Lock()
		current := h.timers[nodeID] == t
		if current {
			delete(h.timers, nodeID)
		}
		h.mu.Unlock()
		if current {
			h.expire(nodeID)
		}
	})
	h.timers[nodeID] = t
}

// Remove stops tracking the node.
func (h *Timers) Remove(nodeID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.timers[nodeID]; ok {
		t.Stop()
		delete(h.timers, nodeID)
	}
}

// Clear stops every timer.
func (h *Timers) Clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, t := range h.timers {
		t.Stop()
		delete(h.timers, id)
	}
}

// Count is the number of tracked nodes.
func (h *Timers) Count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.timers)
}
