package varlock

import (
	"sync"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// Leases are the leader's view of variable lock leases: a timer per
// held lock that releases it through Raft when its TTL passes without a
// renewal, and the lock delay during which a lapsed lock may not be taken
// again. Leases are not in Raft (as in Nomad): a new leader starts every
// held lock's TTL afresh.
type Leases struct {
	mu      sync.Mutex
	enabled bool
	timers  map[structs.NamespacedID]*time.Timer
	delays  map[structs.NamespacedID]time.Time

	// expire releases a lapsed lock; it runs in its own goroutine.
	expire func(key structs.NamespacedID, lockID string)
}

// New returns Leases, disabled until SetEnabled, that call expire (in a
// goroutine of its own) with the variable and lock ID of a lease that ran
// out.
func New(expire func(key structs.NamespacedID, lockID string)) *Leases {
	return &Leases{
		timers: make(map[structs.NamespacedID]*time.Timer),
		delays: make(map[structs.NamespacedID]time.Time),
		expire: expire,
	}
}

// SetEnabled starts (leadership gained) or stops (lost) lease keeping;
// stopping drops every timer and delay.
func (l *Leases) SetEnabled(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.enabled = on
	if !on {
		for k, t := range l.timers {
			t.Stop()
			delete(l.timers, k)
		}
		clear(l.delays)
	}
}

// Track starts or restarts the lease of a held lock.
func (l *Leases) Track(key structs.NamespacedID, lock *structs.VariableLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.enabled || lock == nil {
		return
	}
	if t, ok := l.timers[key]; ok {
		t.Stop()
	}
	id, delay := lock.ID, lock.LockDelay
	var t *time.Timer
	t = time.AfterFunc(lock.TTL, func() {
		l.mu.Lock()
		if l.timers[key] != t {
			l.mu.Unlock()
			return // renewed or released meanwhile
		}
		delete(l.timers, key)
		l.delays[key] = time.Now().Add(delay)
		l.mu.Unlock()
		l.expire(key, id)
	})
	l.timers[key] = t
}

// Untrack ends the lease of a lock released or deleted by its holder;
// no lock delay follows.
func (l *Leases) Untrack(key structs.NamespacedID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.timers[key]; ok {
		t.Stop()
		delete(l.timers, key)
	}
}

// DelayedUntil returns when the lock delay of a lapsed lock ends, and
// whether it is still running at now.
func (l *Leases) DelayedUntil(key structs.NamespacedID, now time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	until, ok := l.delays[key]
	if ok && !now.Before(until) {
		delete(l.delays, key)
		return time.Time{}, false
	}
	return until, ok
}
