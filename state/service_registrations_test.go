package state

import (
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// serviceReg is the registration of service name for alloc on its node.
func serviceReg(alloc *structs.Allocation, name string, port int) *structs.ServiceRegistration {
	return &structs.ServiceRegistration{
		ID:          "_nomad-task-" + alloc.ID + "-group-web-" + name + "-http",
		ServiceName: name,
		Namespace:   alloc.Namespace,
		NodeID:      alloc.NodeID,
		Datacenter:  "dc1",
		JobID:       alloc.JobID,
		AllocID:     alloc.ID,
		Tags:        []string{"v1"},
		Address:     "10.0.0.1",
		Port:        port,
	}
}

// runningAlloc stores a job and a running alloc of it on node.
func runningAlloc(t *testing.T, s *StateStore, index uint64, jobID, nodeID string) *structs.Allocation {
	t.Helper()
	job := mockJob(jobID)
	must.NoError(t, s.UpsertJob(index, job))
	alloc := mockAlloc(job, nodeID, newID(), structs.AllocClientStatusRunning)
	must.NoError(t, s.UpsertAllocs(index+1, []*structs.Allocation{alloc}))
	return alloc
}

func TestServiceRegistrations_UpsertReadDelete(t *testing.T) {
	s := testStore(t)
	node := newID()
	a1 := runningAlloc(t, s, 1, "web", node)
	a2 := runningAlloc(t, s, 3, "api", newID())

	must.NoError(t, s.UpsertServiceRegistrations(10, []*structs.ServiceRegistration{
		serviceReg(a1, "web", 8080), serviceReg(a2, "web", 9090), serviceReg(a2, "api", 7070),
	}))

	web, err := s.ServiceRegistrationsByName(nil, "default", "web")
	must.NoError(t, err)
	must.Len(t, 2, web)
	for _, r := range web {
		must.Eq(t, 10, r.CreateIndex)
		must.Eq(t, 10, r.ModifyIndex)
	}
	all, err := s.ServiceRegistrationsByNamespace(nil, "default")
	must.NoError(t, err)
	must.Len(t, 3, all)
	other, err := s.ServiceRegistrationsByNamespace(nil, "prod")
	must.NoError(t, err)
	must.SliceEmpty(t, other)
	byAlloc, err := s.ServiceRegistrationsByAllocID(nil, a2.ID)
	must.NoError(t, err)
	must.Len(t, 2, byAlloc)
	byJob, err := s.ServiceRegistrationsByJobID(nil, "default", "web")
	must.NoError(t, err)
	must.Len(t, 1, byJob)

	// Re-registering the same thing writes nothing; a change keeps the
	// creation index.
	must.NoError(t, s.UpsertServiceRegistrations(11, []*structs.ServiceRegistration{serviceReg(a1, "web", 8080)}))
	idx, err := s.Index(TableServiceRegistrations)
	must.NoError(t, err)
	must.Eq(t, 10, idx)
	moved := serviceReg(a1, "web", 8081)
	must.NoError(t, s.UpsertServiceRegistrations(12, []*structs.ServiceRegistration{moved}))
	got, err := s.ServiceRegistrationByID(nil, "default", moved.ID)
	must.NoError(t, err)
	must.Eq(t, 8081, got.Port)
	must.Eq(t, 10, got.CreateIndex)
	must.Eq(t, 12, got.ModifyIndex)

	// Delete by ID; an unknown ID is not found and writes nothing.
	must.NoError(t, s.DeleteServiceRegistrationByID(13, "default", moved.ID))
	got, err = s.ServiceRegistrationByID(nil, "default", moved.ID)
	must.NoError(t, err)
	must.Nil(t, got)
	must.ErrorIs(t, s.DeleteServiceRegistrationByID(14, "default", moved.ID), ErrNotFound)

	// Delete by node: a2's node holds two.
	must.NoError(t, s.DeleteServiceRegistrationsByNodeID(15, a2.NodeID))
	all, err = s.ServiceRegistrations(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, all)
	must.NoError(t, s.DeleteServiceRegistrationsByNodeID(16, node), must.Sprint("a node without registrations is no error"))
}

func TestServiceRegistrations_GoneWhenAllocEnds(t *testing.T) {
	cases := []struct {
		name string
		end  func(t *testing.T, s *StateStore, alloc *structs.Allocation)
	}{
		{"client complete", func(t *testing.T, s *StateStore, a *structs.Allocation) {
			must.NoError(t, s.UpdateAllocsFromClient(20, []*structs.Allocation{clientUpdate(a, structs.AllocClientStatusComplete)}))
		}},
		{"client failed", func(t *testing.T, s *StateStore, a *structs.Allocation) {
			must.NoError(t, s.UpdateAllocsFromClient(20, []*structs.Allocation{clientUpdate(a, structs.AllocClientStatusFailed)}))
		}},
		{"plan stops it", func(t *testing.T, s *StateStore, a *structs.Allocation) {
			stop := &structs.Allocation{ID: a.ID, DesiredStatus: structs.AllocDesiredStatusStop, DesiredDescription: "job stopped"}
			must.NoError(t, s.UpsertPlanResults(20, &structs.ApplyPlanResultsRequest{AllocsStopped: []*structs.Allocation{stop}}))
		}},
		{"plan marks it lost", func(t *testing.T, s *StateStore, a *structs.Allocation) {
			lost := &structs.Allocation{ID: a.ID, DesiredStatus: structs.AllocDesiredStatusStop, ClientStatus: structs.AllocClientStatusLost}
			must.NoError(t, s.UpsertPlanResults(20, &structs.ApplyPlanResultsRequest{AllocsStopped: []*structs.Allocation{lost}}))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			a := runningAlloc(t, s, 1, "web", newID())
			keep := runningAlloc(t, s, 3, "api", newID())
			must.NoError(t, s.UpsertServiceRegistrations(10, []*structs.ServiceRegistration{serviceReg(a, "web", 8080), serviceReg(keep, "api", 9090)}))

			ws := memdb.NewWatchSet()
			_, err := s.ServiceRegistrationsByName(ws, "default", "web")
			must.NoError(t, err)
			tc.end(t, s, a)
			must.False(t, ws.Watch(time.After(10*time.Second)), must.Sprint("a blocking read of the service wakes up"))

			web, err := s.ServiceRegistrationsByName(nil, "default", "web")
			must.NoError(t, err)
			must.SliceEmpty(t, web)
			api, err := s.ServiceRegistrationsByName(nil, "default", "api")
			must.NoError(t, err)
			must.Len(t, 1, api, must.Sprint("another alloc's registration stays"))
			idx, err := s.Index(TableServiceRegistrations)
			must.NoError(t, err)
			must.Eq(t, 20, idx)

			// A late registration from the client of the ended alloc is
			// dropped.
			must.NoError(t, s.UpsertServiceRegistrations(21, []*structs.ServiceRegistration{serviceReg(a, "web", 8080)}))
			web, err = s.ServiceRegistrationsByName(nil, "default", "web")
			must.NoError(t, err)
			must.SliceEmpty(t, web)
		})
	}
}

func TestServiceRegistrations_Refused(t *testing.T) {
	s := testStore(t)
	must.Error(t, s.UpsertServiceRegistrations(1, []*structs.ServiceRegistration{nil}))
	must.ErrorContains(t, s.UpsertServiceRegistrations(1, []*structs.ServiceRegistration{{ID: "x", Namespace: "default"}}), "missing ID, namespace or service name")
	all, err := s.ServiceRegistrations(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, all)
}
