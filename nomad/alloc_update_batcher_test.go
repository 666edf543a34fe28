package nomad

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/structs"
)

// TestAllocUpdateBatcher_GroupsWhileOneIsApplied: an update goes out at
// once; the ones that arrive while it is applied go out together in the
// next entry, and every caller gets its own entry's index.
func TestAllocUpdateBatcher_GroupsWhileOneIsApplied(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var entries []*structs.AllocUpdateRequest
	b := &allocUpdateBatcher{apply: func(req *structs.AllocUpdateRequest) (uint64, error) {
		mu.Lock()
		entries = append(entries, req)
		n := len(entries)
		mu.Unlock()
		if n == 1 {
			<-release
		}
		return uint64(100 + n), nil
	}}
	update := func(id string) []*structs.Allocation { return []*structs.Allocation{{ID: id}} }

	first := make(chan uint64)
	go func() {
		index, err := b.submit(update("first"), nil)
		must.NoError(t, err)
		first <- index
	}()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(entries) == 1
	}), wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))

	const later = 10
	indexes := make(chan uint64, later)
	for i := range later {
		go func() {
			index, err := b.submit(update(fmt.Sprint("later-", i)), []*structs.Evaluation{{ID: fmt.Sprint("eval-", i)}})
			must.NoError(t, err)
			indexes <- index
		}()
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.queue) == 1 && len(b.queue[0].req.Alloc) == later
	}), wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))
	close(release)

	must.Eq(t, 101, <-first)
	for range later {
		must.Eq(t, 102, <-indexes)
	}
	mu.Lock()
	defer mu.Unlock()
	must.Len(t, 2, entries)
	must.Len(t, 1, entries[0].Alloc)
	must.Len(t, later, entries[1].Alloc)
	must.Len(t, later, entries[1].Evals)
}

// TestAllocUpdateBatcher_CapsAnEntryAndSharesItsError: an entry carries
// at most maxAllocUpdateBatch allocs, and a failed entry fails each of
// its callers.
func TestAllocUpdateBatcher_CapsAnEntryAndSharesItsError(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	b := &allocUpdateBatcher{apply: func(req *structs.AllocUpdateRequest) (uint64, error) {
		mu.Lock()
		sizes = append(sizes, len(req.Alloc))
		n := len(sizes)
		mu.Unlock()
		if n == 1 {
			<-release
			return 1, nil
		}
		return 0, errors.New("no leader")
	}}
	many := func(n int) []*structs.Allocation {
		out := make([]*structs.Allocation, n)
		for i := range out {
			out[i] = &structs.Allocation{ID: fmt.Sprint(i)}
		}
		return out
	}
	go b.submit(many(1), nil)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(sizes) == 1
	}), wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := b.submit(many(maxAllocUpdateBatch/2+1), nil)
			errs <- err
		}()
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.queue) == 3
	}), wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))
	close(release)
	for range 3 {
		must.ErrorContains(t, <-errs, "no leader")
	}
	mu.Lock()
	defer mu.Unlock()
	must.Eq(t, []int{1, maxAllocUpdateBatch/2 + 1, maxAllocUpdateBatch/2 + 1, maxAllocUpdateBatch/2 + 1}, sizes)
}

// TestNodeUpdateAlloc_ConcurrentReportsAllLand: many nodes reporting at
// once all get their updates in, in fewer Raft entries than reports.
func TestNodeUpdateAlloc_ConcurrentReportsAllLand(t *testing.T) {
	s := testServer(t, func(c *Config) { c.MinHeartbeatTTL = 10 * time.Minute })
	waitForLeader(t, s)
	node := mockNode(structs.GenerateUUID())
	var nr structs.NodeUpdateResponse
	must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: node}, &nr))
	const n = 30 // the node fits 40
	for i := range n {
		registerJob(t, s, mockJob(fmt.Sprint("job-", i)))
	}
	waitEvalsTerminal(t, s, time.Minute)
	allocs, err := s.State().Allocs(nil)
	must.NoError(t, err)
	must.Len(t, n, allocs)

	var wg sync.WaitGroup
	for _, a := range allocs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := &structs.Allocation{ID: a.ID, NodeID: a.NodeID, ClientStatus: structs.AllocClientStatusComplete}
			var resp structs.GenericResponse
			must.NoError(t, s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{u}}, &resp))
			must.Positive(t, resp.Index)
		}()
	}
	wg.Wait()
	allocs, err = s.State().Allocs(nil)
	must.NoError(t, err)
	entries := make(map[uint64]bool)
	for _, a := range allocs {
		must.Eq(t, structs.AllocClientStatusComplete, a.ClientStatus)
		entries[a.ModifyIndex] = true
	}
	must.Less(t, n, len(entries), must.Sprint("some reports shared an entry"))

	var resp structs.GenericResponse
	err = s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{nil}}, &resp)
	must.ErrorContains(t, err, "alloc update 0 is null")
}
