package state

import (
	"maps"
	"slices"
	"sync"
)

// memStore keeps the records in memory, for a state that dies with the
// process. It stores the same encoded records as the file, so that what a
// runner reads back is a copy, never the object it stored.
type memStore struct {
	mu             sync.Mutex
	nodeID, secret string
	byAlloc        map[string]*memAlloc
}

type memAlloc struct {
	alloc, runner []byte
	tasks         map[string]rawTask
}

func newMemStore() *memStore {
	return &memStore{byAlloc: map[string]*memAlloc{}}
}

func (s *memStore) close() error { return nil }

func (s *memStore) nodeIdentity() (id, secret string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodeID, s.secret, nil
}

func (s *memStore) putNodeIdentity(id, secret string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodeID, s.secret = id, secret
	return nil
}

// get returns the alloc's entry, creating it, as the file's
// CreateBucketIfNotExists does.
func (s *memStore) get(allocID string) *memAlloc {
	a := s.byAlloc[allocID]
	if a == nil {
		a = &memAlloc{tasks: map[string]rawTask{}}
		s.byAlloc[allocID] = a
	}
	return a
}

func (s *memStore) putAllocs(ids []string, bufs [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, id := range ids {
		s.get(id).alloc = bufs[i]
	}
	return nil
}

func (s *memStore) putRunner(allocID string, buf []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.get(allocID).runner = buf
	return nil
}

func (s *memStore) putTask(allocID, task string, state, local []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.byAlloc[allocID]
	if a == nil {
		return nil
	}
	t := a.tasks[task]
	if state != nil {
		t.state = state
	}
	if local != nil {
		t.local = local
	}
	a.tasks[task] = t
	return nil
}

func (s *memStore) deleteAlloc(allocID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byAlloc, allocID)
	return nil
}

// allocs visits the allocs in ID order, as the file does.
func (s *memStore) allocs(fn func(r rawAlloc) error) error {
	s.mu.Lock()
	var all []rawAlloc
	for _, id := range slices.Sorted(maps.Keys(s.byAlloc)) {
		a := s.byAlloc[id]
		if a.alloc == nil {
			continue
		}
		all = append(all, rawAlloc{id: id, alloc: a.alloc, runner: a.runner, tasks: maps.Clone(a.tasks)})
	}
	s.mu.Unlock()
	for _, r := range all {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}
