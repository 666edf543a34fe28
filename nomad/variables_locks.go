package nomad

import (
	"sync"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// variableLocks is the leader's view of variable lock leases: a timer per
// held lock that releases it through Raft when its TTL passes without a
// renewal, and the lock delay during which a lapsed lock may not be taken
// again. Leases are not in Raft (as in Nomad): a new leader starts every
// held lock's TTL afresh.
type variableLocks struct {
	mu      sync.Mutex
	enabled bool
	timers  map[structs.NamespacedID]*time.Timer
	delays  map[structs.NamespacedID]time.Time

	// expire releases a lapsed lock; it runs in its own goroutine.
	expire func(key structs.NamespacedID, lockID string)
}

func newVariableLocks(expire func(structs.NamespacedID, string)) *variableLocks {
	return &variableLocks{
		timers: make(map[structs.NamespacedID]*time.Timer),
		delays: make(map[structs.NamespacedID]time.Time),
		expire: expire,
	}
}

// setEnabled starts (leadership gained) or stops (lost) lease keeping;
// stopping drops every timer and delay.
func (l *variableLocks) setEnabled(on bool) {
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

// track starts or restarts the lease of a held lock.
func (l *variableLocks) track(key structs.NamespacedID, lock *structs.VariableLock) {
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

// untrack ends the lease of a lock released or deleted by its holder;
// no lock delay follows.
func (l *variableLocks) untrack(key structs.NamespacedID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.timers[key]; ok {
		t.Stop()
		delete(l.timers, key)
	}
}

// delayedUntil returns when the lock delay of a lapsed lock ends, and
// whether it is still running at now.
func (l *variableLocks) delayedUntil(key structs.NamespacedID, now time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	until, ok := l.delays[key]
	if ok && !now.Before(until) {
		delete(l.delays, key)
		return time.Time{}, false
	}
	return until, ok
}

// restoreVariableLocks starts a lease for every held lock; the leader
// calls it when it takes over.
func (s *Server) restoreVariableLocks() error {
	s.varLocks.setEnabled(true)
	vars, err := s.State().VariablesByPrefix(nil, "*", "")
	if err != nil {
		return err
	}
	for _, v := range vars {
		if v.Lock != nil {
			s.varLocks.track(structs.NamespacedID{Namespace: v.Namespace, ID: v.Path}, v.Lock)
		}
	}
	return nil
}

// expireVariableLock releases a lock whose lease ran out, unless its
// holder released it or the variable went away first (the FSM then
// answers with a conflict, which changes nothing).
func (s *Server) expireVariableLock(key structs.NamespacedID, lockID string) {
	req := &structs.VarApplyStateRequest{
		Op: structs.VarOpLockRelease,
		Var: &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{
			Namespace: key.Namespace, Path: key.ID, ModifyTime: time.Now().UnixNano(),
			Lock: &structs.VariableLock{ID: lockID},
		}},
	}
	if _, _, err := s.raftApply(structs.VarApplyStateRequestType, req); err != nil {
		s.logger.Warn("failed to release an expired variable lock", "namespace", key.Namespace, "path", key.ID, "error", err)
		return
	}
	s.logger.Debug("released an expired variable lock", "namespace", key.Namespace, "path", key.ID)
}
