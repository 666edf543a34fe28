package fsm

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/structs"
)

func TestFSM_ServiceRegistrations(t *testing.T) {
	f := testFSM(t)
	node := mockNode(structs.GenerateUUID())
	mustApply(t, f, 1, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	job := mockJob("svc")
	job.Canonicalize()
	eval := mock.JobEval(job)
	mustApply(t, f, 2, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval})
	alloc := mock.Alloc(job, node, eval.ID)
	mustApply(t, f, 3, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{alloc}, Job: job, EvalID: eval.ID})

	reg := func(name string) *structs.ServiceRegistration {
		return &structs.ServiceRegistration{ID: "_nomad-task-" + alloc.ID + "-group-web-" + name + "-http", ServiceName: name,
			Namespace: job.Namespace, NodeID: node.ID, JobID: job.ID, AllocID: alloc.ID, Address: "10.0.0.1", Port: 8080}
	}
	mustApply(t, f, 4, structs.ServiceRegistrationUpsertRequestType, &structs.ServiceRegistrationUpsertRequest{
		Services: []*structs.ServiceRegistration{reg("web"), reg("admin")},
	})
	all, err := f.State().ServiceRegistrations(nil)
	must.NoError(t, err)
	must.Len(t, 2, all)

	del := &structs.ServiceRegistrationDeleteByIDRequest{ID: reg("web").ID}
	del.Namespace = job.Namespace
	mustApply(t, f, 5, structs.ServiceRegistrationDeleteByIDRequestType, del)
	web, err := f.State().ServiceRegistrationsByName(nil, job.Namespace, "web")
	must.NoError(t, err)
	must.SliceEmpty(t, web)
	resp := apply(t, f, 6, structs.ServiceRegistrationDeleteByIDRequestType, del)
	must.ErrorContains(t, resp.(error), "not found")

	mustApply(t, f, 7, structs.ServiceRegistrationDeleteByNodeIDRequestType, &structs.ServiceRegistrationDeleteByNodeIDRequest{NodeID: node.ID})
	all, err = f.State().ServiceRegistrations(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, all)

	// A nil registration in the entry is refused, not a panic.
	resp = apply(t, f, 8, structs.ServiceRegistrationUpsertRequestType, &structs.ServiceRegistrationUpsertRequest{Services: []*structs.ServiceRegistration{nil}})
	must.ErrorContains(t, resp.(error), "Services[0] is nil")
}
