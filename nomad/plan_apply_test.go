package nomad

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/nomad/planfit"
	"github.com/nomadq/nomadq/structs"
)

// countingApply is a Raft entry's future that counts its waiters and
// completes when told.
type countingApply struct {
	done    chan struct{}
	waiters atomic.Int32
}

func (f *countingApply) Error() error {
	f.waiters.Add(1)
	<-f.done
	return nil
}
func (f *countingApply) Response() any { return "applied" }
func (f *countingApply) Index() uint64 { return 42 }

// A plan's entry is waited for by the applier's in-flight count and by
// the worker; raft's future is waited on once for both.
func TestSharedApply_ManyWaitersOneRaftWait(t *testing.T) {
	f := &countingApply{done: make(chan struct{})}
	shared := newSharedApply(f)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			must.NoError(t, shared.Error())
			must.Eq(t, "applied", shared.Response())
			must.Eq(t, 42, shared.Index())
		})
	}
	select {
	case <-shared.done:
		t.Fatal("done before the entry was applied")
	case <-time.After(20 * time.Millisecond):
	}
	close(f.done)
	wg.Wait()
	must.Eq(t, 1, f.waiters.Load())
}

// A plan rejected in full because plans in flight filled its node is
// answered with a refresh index that holds them: refreshed to the
// snapshot it was checked against, the scheduler would see the same room
// and pick the same node until its plan attempts ran out.
func TestApplyPlan_RejectedByPlansInFlightRefreshesPastThem(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	node := mockNode(structs.GenerateUUID())
	var nr structs.NodeUpdateResponse
	must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: node}, &nr))
	job := mockJob("filler")
	job.Canonicalize()
	registerJob(t, s, job)
	stored, err := s.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)

	// 40 allocs of 100 MHz fill the node's 4000; their entry is written
	// only after the next plan was checked against the store: once the
	// applier waits for the plans in flight, or (without that wait) once
	// it has answered.
	var fill []*structs.Allocation
	for range 40 {
		fill = append(fill, mock.Alloc(stored, node, structs.GenerateUUID()))
	}
	waiting, answered := make(chan struct{}), make(chan struct{})
	inflight := &planfit.Inflight{Waiting: func() { close(waiting) }}
	applied := make(chan struct{})
	inflight.Add(map[string][]*structs.Allocation{node.ID: fill}, applied)
	fillIndex := make(chan uint64, 1)
	go func() {
		defer close(applied)
		select {
		case <-waiting:
		case <-answered:
		}
		_, index, err := s.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{AllocsUpdated: fill, Job: stored})
		if err != nil {
			t.Error(err)
		}
		fillIndex <- index
	}()

	plan := &structs.Plan{Job: stored, NodeAllocation: map[string][]*structs.Allocation{
		node.ID: {mock.Alloc(stored, node, structs.GenerateUUID())}}}
	result, future, err := s.applyPlan(plan, inflight)
	close(answered)
	must.NoError(t, err)
	must.Nil(t, future)
	must.MapEmpty(t, result.NodeAllocation, must.Sprint("the node is full with the plans in flight"))
	index := <-fillIndex
	must.GreaterEq(t, index, result.RefreshIndex, must.Sprintf("refresh to %d, the filling entry is at %d", result.RefreshIndex, index))
}
