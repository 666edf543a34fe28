package client

import (
	"reflect"
	"testing"

	"github.com/nomadq/nomadq/internal/deepcopytest"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// TestCopyRPC_Deep fills every field of each type the in-process RPC
// copies by hand and checks that the copy is equal and shares nothing
// with the original, allocation jobs included, so a field added later
// and missed by the copy fails here.
func TestCopyRPC_Deep(t *testing.T) {
	for _, v := range []any{
		&structs.NodeSpecificRequest{},
		&structs.NodeClientAllocsResponse{},
		&structs.NodesClientAllocsRequest{},
		&structs.NodesClientAllocsResponse{},
		&structs.AllocsGetRequest{},
		&structs.AllocsGetResponse{},
		&structs.AllocUpdateRequest{},
		&structs.GenericResponse{},
	} {
		name := reflect.TypeOf(v).Elem().Name()
		t.Run(name, func(t *testing.T) {
			deepcopytest.Fill(reflect.ValueOf(v).Elem(), map[reflect.Type]bool{})
			c, ok := copyRPC(v)
			must.True(t, ok)
			must.Eq(t, v, c)
			var shared []string
			deepcopytest.FindShared(name, reflect.ValueOf(v).Elem(), reflect.ValueOf(c).Elem(), nil, &shared)
			must.SliceEmpty(t, shared, must.Sprintf("the copy shares memory at %v", shared))
		})
	}
	_, ok := copyRPC(&structs.JobRegisterRequest{})
	must.False(t, ok, must.Sprint("other types take the msgpack round trip"))
}

// TestInProcessRPC_ReplySharesNothing: an alloc the client gets from the
// in-process server, and its job, are its own; changing them leaves the
// server's state alone.
func TestInProcessRPC_ReplySharesNothing(t *testing.T) {
	job := &structs.Job{ID: "j", Meta: map[string]string{"k": "v"}}
	stored := &structs.Allocation{ID: "a", Job: job, TaskStates: map[string]*structs.TaskState{"t": {State: "running"}}}
	srv := rpcFunc(func(method string, args, reply any) error {
		must.Eq(t, "Alloc.GetAllocs", method)
		must.Eq(t, []string{"a"}, args.(*structs.AllocsGetRequest).AllocIDs)
		reply.(*structs.AllocsGetResponse).Allocs = []*structs.Allocation{stored}
		return nil
	})
	var resp structs.AllocsGetResponse
	err := InProcessRPC(srv).Call(t.Context(), "Alloc.GetAllocs", &structs.AllocsGetRequest{AllocIDs: []string{"a"}}, &resp)
	must.NoError(t, err)
	must.Len(t, 1, resp.Allocs)
	got := resp.Allocs[0]
	must.Eq(t, stored, got)
	got.Job.Meta["k"] = "changed"
	got.TaskStates["t"].State = "dead"
	must.Eq(t, "v", job.Meta["k"])
	must.Eq(t, "running", stored.TaskStates["t"].State)
}

type rpcFunc func(method string, args, reply any) error

func (f rpcFunc) RPC(method string, args, reply any) error { return f(method, args, reply) }
