package nomad

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// TestPresignPlan_SignsNewPlacementsOnly: the worker signs the identities
// of a plan's new placements before the plan reaches the applier, and
// leaves an in-place update of a stored alloc to keep what it has.
func TestPresignPlan_SignsNewPlacementsOnly(t *testing.T) {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	key, err := newRootKey(time.Now())
	must.NoError(t, err)
	must.NoError(t, st.UpsertRootKey(1, key))
	job := identityJob("presign")
	must.NoError(t, st.UpsertJob(2, job))
	stored := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: "default", JobID: job.ID, Job: job,
		TaskGroup: "work", NodeID: structs.GenerateUUID(), DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus: structs.AllocClientStatusPending, SignedIdentities: map[string]string{"main": "stored-token"}}
	must.NoError(t, st.UpsertAllocs(3, []*structs.Allocation{stored}))
	snap, err := st.Snapshot()
	must.NoError(t, err)

	fresh := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: "default", JobID: job.ID, TaskGroup: "work"}
	update := &structs.Allocation{ID: stored.ID, Namespace: "default", JobID: job.ID, TaskGroup: "work"}
	plan := &structs.Plan{Job: job, NodeAllocation: map[string][]*structs.Allocation{stored.NodeID: {fresh, update}}}
	s := &Server{keyring: newKeyring()}
	s.presignPlan(snap, plan)

	must.MapLen(t, 1, fresh.SignedIdentities)
	must.Eq(t, key.KeyID, fresh.SigningKeyID)
	must.MapEmpty(t, update.SignedIdentities, must.Sprint("an update is left for the applier to carry over"))

	// The applier keeps the worker's token rather than signing again.
	token := fresh.SignedIdentities["main"]
	write := fresh.Copy()
	must.NoError(t, s.signIdentities(snap, plan, []placement{{planned: fresh, write: write}}))
	must.Eq(t, token, write.SignedIdentities["main"])
}

// TestPresignPlan_WithoutKeyLeavesItToTheApplier: with no root key yet the
// worker signs nothing and the applier reports the error.
func TestPresignPlan_WithoutKeyLeavesItToTheApplier(t *testing.T) {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	snap, err := st.Snapshot()
	must.NoError(t, err)
	a := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: "default", TaskGroup: "work"}
	plan := &structs.Plan{Job: identityJob("x"), NodeAllocation: map[string][]*structs.Allocation{"n": {a}}}
	s := &Server{keyring: newKeyring()}
	s.presignPlan(snap, plan)
	must.MapEmpty(t, a.SignedIdentities)
	must.ErrorIs(t, s.signIdentities(snap, plan, []placement{{planned: a, write: a.Copy()}}), errNoActiveRootKey)
}

// TestSchedulerState_AllocsByNodeOmitsTerminal: the scheduler computes a
// node's usage from its live allocs only, so a node that ran thousands of
// finished allocs costs no more to place on than an idle one.
func TestSchedulerState_AllocsByNodeOmitsTerminal(t *testing.T) {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	job := mockJob("usage")
	must.NoError(t, st.UpsertJob(1, job))
	nodeID := structs.GenerateUUID()
	var allocs []*structs.Allocation
	for i, status := range []string{structs.AllocClientStatusRunning, structs.AllocClientStatusComplete, structs.AllocClientStatusFailed, structs.AllocClientStatusPending} {
		allocs = append(allocs, &structs.Allocation{ID: structs.GenerateUUID(), Namespace: "default", JobID: job.ID, Job: job,
			TaskGroup: "work", NodeID: nodeID, Name: fmt.Sprintf("usage.work[%d]", i),
			DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: status})
	}
	must.NoError(t, st.UpsertAllocs(2, allocs))
	snap, err := st.Snapshot()
	must.NoError(t, err)
	got, err := (&snapshotState{snap: snap}).AllocsByNode(nodeID)
	must.NoError(t, err)
	ids := map[string]bool{}
	for _, a := range got {
		ids[a.ID] = true
	}
	must.Eq(t, map[string]bool{allocs[0].ID: true, allocs[3].ID: true}, ids)
}

// TestDevServer_CompactsItsRaftLog: a dev server keeps its in-memory Raft
// log short, snapshotting after a few hundred entries instead of 8,192 and
// keeping only the last 128 behind the snapshot.
func TestDevServer_CompactsItsRaftLog(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	for i := range devRaftSnapshotThreshold + 100 {
		registerJob(t, s, mockJob(fmt.Sprintf("compact-%d", i)))
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return s.raft.Stats()["last_snapshot_index"] != "0"
	}), wait.Timeout(60*time.Second), wait.Gap(100*time.Millisecond)), must.Sprint("the dev server's raft log was never compacted"))
	snapIndex, err := strconv.ParseUint(s.raft.Stats()["last_snapshot_index"], 10, 64)
	must.NoError(t, err)
	first, err := s.raftStore.FirstIndex()
	must.NoError(t, err)
	// At most the trailing entries stay behind the snapshot.
	must.GreaterEq(t, snapIndex-devRaftTrailingLogs+1, first, must.Sprintf("snapshot at %d", snapIndex))
}
