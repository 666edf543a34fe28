package state

import (
	"testing"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// recordChanges makes s hand its commits to the returned slice.
func recordChanges(s *StateStore) *memdb.Changes {
	var got memdb.Changes
	s.SetChangeFeed(func(_ uint64, c memdb.Changes) { got = append(got, c...) })
	return &got
}

func TestEventsFromChanges_AllocationTimeout(t *testing.T) {
	cases := []struct {
		name        string
		status      string
		description string
		wantTimeout bool
	}{
		{"complete at the max_run_duration deadline", structs.AllocClientStatusComplete, structs.AllocTimeoutReasonMaxRunDuration, true},
		{"failed with the same description", structs.AllocClientStatusFailed, structs.AllocTimeoutReasonMaxRunDuration, false},
		{"an ordinary completion", structs.AllocClientStatusComplete, "All tasks have completed", false},
		{"running", structs.AllocClientStatusRunning, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			job := mockBatchJob("report")
			must.NoError(t, s.UpsertJob(1, job))
			alloc := mockAlloc(job, newID(), newID(), structs.AllocClientStatusPending)
			must.NoError(t, s.UpsertAllocs(2, []*structs.Allocation{alloc}))

			got := recordChanges(s)
			up := clientUpdate(alloc, tc.status)
			up.ClientDescription = tc.description
			must.NoError(t, s.UpdateAllocsFromClient(3, []*structs.Allocation{up}))

			var allocEvents []structs.Event
			for _, ev := range EventsFromChanges(structs.AllocClientUpdateRequestType, 3, *got) {
				if ev.Topic == structs.TopicAllocation {
					allocEvents = append(allocEvents, ev)
				}
			}
			must.SliceLen(t, 1, allocEvents)
			ev := allocEvents[0]
			must.Eq(t, structs.TypeAllocationUpdated, ev.Type)
			must.Eq(t, 3, ev.Index)
			must.Eq(t, alloc.ID, ev.Key)
			must.Eq(t, []string{"report", ""}, ev.FilterKeys)
			p := ev.Payload.(*structs.AllocationEvent)
			must.Eq(t, tc.wantTimeout, p.Timeout)
			if tc.wantTimeout {
				must.Eq(t, structs.AllocTimeoutReasonMaxRunDuration, p.TimeoutReason)
			} else {
				must.Eq(t, "", p.TimeoutReason)
			}
			must.Eq(t, tc.description, p.Allocation.ClientDescription)
			must.Nil(t, p.Allocation.Job, must.Sprint("the event carries the alloc without its job"))

			stored, err := s.AllocByID(nil, alloc.ID)
			must.NoError(t, err)
			must.NotNil(t, stored.Job, must.Sprint("the stored alloc keeps its job"))
		})
	}
}

func TestEventsFromChanges_TopicsAndTypes(t *testing.T) {
	s := testStore(t)
	got := recordChanges(s)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(2, job))
	must.NoError(t, s.DeleteJob(3, job.Namespace, job.ID))

	// The drainer's completion of a drain is a node event too (the api
	// suite's TestNodes_ToggleDrain waits for it on the stream).
	drainDone := EventsFromChanges(structs.BatchNodeUpdateDrainRequestType, 1, (*got)[:1])
	must.SliceLen(t, 1, drainDone)
	must.Eq(t, structs.TypeNodeDrain, drainDone[0].Type)

	evs := EventsFromChanges(structs.NodeRegisterRequestType, 1, (*got)[:1])
	must.SliceLen(t, 1, evs)
	must.Eq(t, structs.TopicNode, evs[0].Topic)
	must.Eq(t, structs.TypeNodeRegistration, evs[0].Type)
	must.Eq(t, "", evs[0].Payload.(*structs.NodeStreamEvent).Node.SecretID, must.Sprint("the event blanks the node's secret"))
	stored, err := s.NodeByID(nil, node.ID)
	must.NoError(t, err)
	must.Eq(t, node.SecretID, stored.SecretID, must.Sprint("the stored node keeps it"))

	var jobEvents []structs.Event
	for _, ev := range EventsFromChanges(structs.JobDeregisterRequestType, 3, *got) {
		if ev.Topic == structs.TopicJob {
			jobEvents = append(jobEvents, ev)
		}
	}
	must.SliceLen(t, 2, jobEvents, must.Sprint("the register and the purge, not the job versions"))
	must.False(t, jobEvents[0].Payload.(*structs.JobEvent).Deleted)
	must.True(t, jobEvents[1].Payload.(*structs.JobEvent).Deleted)
	must.Eq(t, structs.TypeJobDeregistered, jobEvents[1].Type)

	must.SliceEmpty(t, EventsFromChanges(structs.SchedulerConfigRequestType, 4, *got), must.Sprint("types Nomad makes no events for make none"))
}
