package nomad

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// One batch watch answers the allocs of each node it names, each node
// authenticated by its own secret, and blocks until one of them changes.
func TestGetClientAllocsBatch_WatchesManyNodes(t *testing.T) {
	s := testServer(t, func(c *Config) {
		c.ACLEnabled = true
		c.MinHeartbeatTTL = 10 * time.Minute
	})
	waitForLeader(t, s)
	a, b := mockNode(structs.GenerateUUID()), mockNode(structs.GenerateUUID())
	for _, n := range []*structs.Node{a, b} {
		var nr structs.NodeUpdateResponse
		must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: n}, &nr))
	}
	pairs := []structs.NodeSecret{{NodeID: a.ID, SecretID: a.SecretID}, {NodeID: b.ID, SecretID: b.SecretID}}

	var first structs.NodesClientAllocsResponse
	must.NoError(t, s.RPC("Node.GetClientAllocsBatch", &structs.NodesClientAllocsRequest{Nodes: pairs}, &first))
	must.MapLen(t, 2, first.Allocs, must.Sprint("a first read lists every node"))
	must.MapEmpty(t, first.Allocs[a.ID])

	// A wrong secret for any one node refuses the whole query.
	bad := []structs.NodeSecret{pairs[0], {NodeID: b.ID, SecretID: a.SecretID}}
	var denied structs.NodesClientAllocsResponse
	err := s.RPC("Node.GetClientAllocsBatch", &structs.NodesClientAllocsRequest{Nodes: bad}, &denied)
	must.ErrorContains(t, err, structs.ErrPermissionDenied.Error())

	got := make(chan structs.NodesClientAllocsResponse, 1)
	go func() { got <- watchBatch(s, pairs, first.Index) }()
	// An alloc lands on node b (written to the store directly: the
	// watch only needs the store to change).
	job := mockJob("j")
	must.NoError(t, s.State().UpsertJob(first.Index+100, job))
	alloc := &structs.Allocation{
		ID: structs.GenerateUUID(), Namespace: job.Namespace, NodeID: b.ID, JobID: job.ID, Job: job, TaskGroup: job.TaskGroups[0].Name,
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending,
	}
	must.NoError(t, s.State().UpsertAllocs(first.Index+101, []*structs.Allocation{alloc}))
	var second structs.NodesClientAllocsResponse
	select {
	case second = <-got:
		must.MapLen(t, 1, second.Allocs, must.Sprint("only the node whose allocs changed is answered"))
		must.MapContainsKey(t, second.Allocs[b.ID], alloc.ID)
		must.Greater(t, first.Index, second.Index)
	case <-time.After(30 * time.Second):
		t.Fatal("the batch watch did not wake on the new alloc")
	}

	// The same query wakes on a client's status report (no AllocModifyIndex
	// change) and goes on blocking; the node it re-read then gets a second
	// alloc, which the answer must carry beside the first.
	go func() { got <- watchBatch(s, pairs, second.Index) }()
	running := alloc.Copy()
	running.ClientStatus = structs.AllocClientStatusRunning
	must.NoError(t, s.State().UpdateAllocsFromClient(second.Index+10, []*structs.Allocation{running}))
	select {
	case resp := <-got:
		t.Fatalf("a client status report answered the watch: %v", resp.Allocs)
	case <-time.After(200 * time.Millisecond):
	}
	next := alloc.Copy()
	next.ID = structs.GenerateUUID()
	must.NoError(t, s.State().UpsertAllocs(second.Index+11, []*structs.Allocation{next}))
	select {
	case resp := <-got:
		must.MapLen(t, 1, resp.Allocs)
		must.MapLen(t, 2, resp.Allocs[b.ID], must.Sprint("the re-read node lists both its allocs"))
		must.Eq(t, second.Index+11, resp.Index)
	case <-time.After(30 * time.Second):
		t.Fatal("the batch watch did not wake on the second alloc")
	}

	// A garbage collection raises no modify index: the query wakes on the
	// node whose alloc went and answers it without that alloc. (Node a
	// may be answered too, with nothing, if the query first ran after the
	// collection: a fresh read counts the collection for every node.)
	go func() { got <- watchBatch(s, pairs, second.Index+11) }()
	must.NoError(t, s.State().DeleteEval(second.Index+12, nil, []string{alloc.ID}))
	select {
	case resp := <-got:
		must.MapEmpty(t, resp.Allocs[a.ID])
		must.Eq(t, map[string]uint64{next.ID: second.Index + 11}, resp.Allocs[b.ID])
		must.Eq(t, second.Index+12, resp.Index)
	case <-time.After(30 * time.Second):
		t.Fatal("the batch watch did not wake on the garbage collection")
	}
}

// watchBatch runs one blocking batch query from index min (a minute at
// most) and returns its answer.
func watchBatch(s *Server, pairs []structs.NodeSecret, min uint64) structs.NodesClientAllocsResponse {
	req := &structs.NodesClientAllocsRequest{Nodes: pairs}
	req.MinQueryIndex = min
	req.MaxQueryTime = int64(time.Minute)
	var resp structs.NodesClientAllocsResponse
	_ = s.RPC("Node.GetClientAllocsBatch", req, &resp)
	return resp
}
