package nomad

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/structs"
)

// The drain, its deadline included, lives in Raft: a snapshot taken while
// a node drains restores the same strategy, so a leader elected after a
// failover enforces the same instant.
func TestFSM_DrainSurvivesSnapshotRestore(t *testing.T) {
	f := testFSM(t)
	node := mockNode(structs.GenerateUUID())
	mustApply(t, f, 1, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	started := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	drain := &structs.DrainStrategy{
		DrainSpec:     structs.DrainSpec{Deadline: 5 * time.Second, IgnoreSystemJobs: true},
		ForceDeadline: started.Add(5 * time.Second),
		StartedAt:     started,
	}
	mustApply(t, f, 2, structs.NodeUpdateDrainRequestType, &structs.NodeUpdateDrainRequest{
		NodeID: node.ID, DrainStrategy: drain, Meta: map[string]string{"reason": "kernel upgrade"}, UpdatedAt: started.Unix(),
		NodeEvent: &structs.NodeEvent{Subsystem: structs.NodeEventSubsystemDrain, Message: structs.NodeEventDrainSet, Timestamp: started},
	})

	snap, err := f.Snapshot()
	must.NoError(t, err)
	var sink memSink
	must.NoError(t, snap.Persist(&sink))
	restored := testFSM(t)
	must.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))

	got, err := restored.State().NodeByID(nil, node.ID)
	must.NoError(t, err)
	must.NotNil(t, got.DrainStrategy)
	must.True(t, got.DrainStrategy.ForceDeadline.Equal(drain.ForceDeadline))
	must.True(t, got.DrainStrategy.StartedAt.Equal(started))
	must.Eq(t, drain.DrainSpec, got.DrainStrategy.DrainSpec)
	must.Eq(t, structs.NodeSchedulingIneligible, got.SchedulingEligibility)
	must.NotNil(t, got.LastDrain)
	must.Eq(t, structs.DrainStatusDraining, got.LastDrain.Status)
	must.Eq(t, map[string]string{"reason": "kernel upgrade"}, got.LastDrain.Meta)
	must.Eq(t, structs.NodeEventDrainSet, got.Events[len(got.Events)-1].Message)
}

// The deadline is in Raft: every server holds the instant the leader set,
// and after a failover the new leader's drainer ends the drain at it. When
// a new leader enforces the deadline (before or after it passes) is tested
// in fake time in nomad/nodedrain; here the deadline is two seconds, time
// enough for the old leader to hand leadership over before it passes.
func TestNodeDrain_DeadlineSurvivesLeaderFailover(t *testing.T) {
	s1 := testServer(t, clusterConfig(t, 3, nil))
	join := []string{s1.SerfAddr()}
	s2 := testServer(t, clusterConfig(t, 3, join))
	s3 := testServer(t, clusterConfig(t, 3, join))
	servers := []*Server{s1, s2, s3}
	leader := waitForLeader(t, servers...)

	node := registerNode(t, leader)
	registerJob(t, leader, mockJob("work"))
	var alloc *structs.Allocation
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		allocs, _ := leader.State().AllocsByNode(nil, node.ID)
		if len(allocs) != 1 {
			return false
		}
		alloc = allocs[0]
		return true
	}), wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)))

	var dr structs.NodeDrainUpdateResponse
	must.NoError(t, leader.RPC("Node.UpdateDrain", &structs.NodeUpdateDrainRequest{
		NodeID: node.ID, DrainStrategy: &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: 2 * time.Second}},
	}, &dr))
	// Every server, the leader included (on a loaded machine leadership
	// can move during the call, which is then forwarded), applies the
	// same deadline.
	deadlines := func() []time.Time {
		var out []time.Time
		for _, s := range servers {
			n, err := s.State().NodeByID(nil, node.ID)
			if err != nil || n == nil || n.DrainStrategy == nil {
				return nil
			}
			out = append(out, n.DrainStrategy.ForceDeadline)
		}
		return out
	}
	var all []time.Time
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		all = deadlines()
		return len(all) == len(servers)
	}), wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)))
	forceDeadline := all[0]
	must.False(t, forceDeadline.IsZero())
	for _, d := range all {
		must.True(t, d.Equal(forceDeadline), must.Sprintf("every server holds the same deadline: %v", all))
	}

	must.NoError(t, leader.Shutdown())
	var survivors []*Server
	for _, s := range servers {
		if s != leader {
			survivors = append(survivors, s)
		}
	}
	newLeader := waitForLeader(t, survivors...)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		n, _ := newLeader.State().NodeByID(nil, node.ID)
		return n != nil && n.DrainStrategy == nil
	}), wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)))
	n, err := newLeader.State().NodeByID(nil, node.ID)
	must.NoError(t, err)
	last := n.Events[len(n.Events)-1]
	must.Eq(t, structs.NodeEventDrainComplete, last.Message)
	must.Eq(t, "true", last.Details[structs.NodeEventDetailDeadlined])
	must.False(t, last.Timestamp.Before(forceDeadline), must.Sprint("never before the deadline"))
	a, err := newLeader.State().AllocByID(nil, alloc.ID)
	must.NoError(t, err)
	must.True(t, a.DesiredTransition.ShouldMigrate())
}
