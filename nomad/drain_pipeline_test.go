package nomad

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

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
