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

// TestGroupCommit_GroupsWhileOneIsApplied: a piece goes out at once;
// the ones that arrive while it is applied go out together in the next
// entry, and every caller gets its own entry's index.
func TestGroupCommit_GroupsWhileOneIsApplied(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var entries [][]string
	c := &groupCommit[string]{max: 100, apply: func(pieces []string) (uint64, error) {
		mu.Lock()
		entries = append(entries, pieces)
		n := len(entries)
		mu.Unlock()
		if n == 1 {
			<-release
		}
		return uint64(100 + n), nil
	}}
	entryCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(entries)
	}

	first := make(chan uint64)
	go func() {
		index, err := c.submit("first", 1)
		must.NoError(t, err)
		first <- index
	}()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return entryCount() == 1 }),
		wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))

	const later = 10
	indexes := make(chan uint64, later)
	for i := range later {
		go func() {
			index, err := c.submit(fmt.Sprint("later-", i), 1)
			must.NoError(t, err)
			indexes <- index
		}()
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.queue) == 1 && len(c.queue[0].pieces) == later
	}), wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))
	close(release)

	must.Eq(t, 101, <-first)
	for range later {
		must.Eq(t, 102, <-indexes)
	}
	must.Eq(t, 2, entryCount())
	mu.Lock()
	defer mu.Unlock()
	must.Len(t, 1, entries[0])
	must.Len(t, later, entries[1])
}

// TestGroupCommit_CapsAnEntryAndSharesItsError: an entry carries at most
// max weight, and a failed entry fails each of its callers.
func TestGroupCommit_CapsAnEntryAndSharesItsError(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	c := &groupCommit[int]{max: 10, apply: func(pieces []int) (uint64, error) {
		weight := 0
		for _, p := range pieces {
			weight += p
		}
		mu.Lock()
		sizes = append(sizes, weight)
		n := len(sizes)
		mu.Unlock()
		if n == 1 {
			<-release
			return 1, nil
		}
		return 0, errors.New("no leader")
	}}
	go c.submit(1, 1)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(sizes) == 1
	}), wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := c.submit(6, 6)
			errs <- err
		}()
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.queue) == 3
	}), wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))
	close(release)
	for range 3 {
		must.ErrorContains(t, <-errs, "no leader")
	}
	mu.Lock()
	defer mu.Unlock()
	must.Eq(t, []int{1, 6, 6, 6}, sizes)
}

// TestNodeUpdateAlloc_ConcurrentReportsAllLand: reports that arrive
// while one is being applied all land, in one entry after it.
func TestNodeUpdateAlloc_ConcurrentReportsAllLand(t *testing.T) {
	s, _ := serverWithNode(t)
	const n = 30 // the node fits 40
	for i := range n {
		registerJob(t, s, mockJob(fmt.Sprint("job-", i)))
	}
	waitEvalsTerminal(t, s, time.Minute)
	allocs, err := s.State().Allocs(nil)
	must.NoError(t, err)
	must.Len(t, n, allocs)

	// Hold the first report's entry until the others have queued behind
	// it, so the test does not depend on how fast the machine is.
	release := make(chan struct{})
	var held sync.Once
	ac := s.allocUpdates
	ac.mu.Lock()
	apply := ac.apply
	ac.apply = func(p []*structs.AllocUpdateRequest) (uint64, error) {
		held.Do(func() { <-release })
		return apply(p)
	}
	ac.mu.Unlock()

	report := func(a *structs.Allocation) {
		u := &structs.Allocation{ID: a.ID, NodeID: a.NodeID, ClientStatus: structs.AllocClientStatusComplete}
		var resp structs.GenericResponse
		must.NoError(t, s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{u}}, &resp))
		must.Positive(t, resp.Index)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); report(allocs[0]) }()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		ac.mu.Lock()
		defer ac.mu.Unlock()
		return ac.running && len(ac.queue) == 0
	}), wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))
	for _, a := range allocs[1:] {
		wg.Add(1)
		go func() { defer wg.Done(); report(a) }()
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		ac.mu.Lock()
		defer ac.mu.Unlock()
		return len(ac.queue) == 1 && len(ac.queue[0].pieces) == n-1
	}), wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))
	close(release)
	wg.Wait()

	allocs, err = s.State().Allocs(nil)
	must.NoError(t, err)
	entries := make(map[uint64]bool)
	for _, a := range allocs {
		must.Eq(t, structs.AllocClientStatusComplete, a.ClientStatus)
		entries[a.ModifyIndex] = true
	}
	must.MapLen(t, 2, entries, must.Sprint("the first report's entry, and one for the rest"))

	var resp structs.GenericResponse
	err = s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{nil}}, &resp)
	must.ErrorContains(t, err, "alloc update 0 is null")
}
