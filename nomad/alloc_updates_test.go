package nomad

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/nomad/internal/groupcommit"
	"github.com/nomadq/nomadq/structs"
)

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
	release, entered := make(chan struct{}), make(chan struct{})
	var held sync.Once
	ac := groupcommit.New(maxAllocUpdateBatch, func(p []*structs.AllocUpdateRequest) (uint64, error) {
		held.Do(func() { close(entered); <-release })
		return s.applyAllocUpdates(p)
	})
	s.allocUpdates = ac // no report has been made yet

	report := func(a *structs.Allocation) {
		u := &structs.Allocation{ID: a.ID, NodeID: a.NodeID, ClientStatus: structs.AllocClientStatusComplete}
		var resp structs.GenericResponse
		must.NoError(t, s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{u}}, &resp))
		must.Positive(t, resp.Index)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); report(allocs[0]) }()
	<-entered
	for _, a := range allocs[1:] {
		wg.Add(1)
		go func() { defer wg.Done(); report(a) }()
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		entries, pieces := ac.Waiting()
		return entries == 1 && pieces == n-1
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
