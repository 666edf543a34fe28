package nomad

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

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

	// A node re-registered with a new secret refuses a query that holds
	// the old one: one already blocked wakes (the node's alloc watch
	// closes, see TestWatchNodeAllocs_WakesOnANewSecret) and finds the
	// secret changed; one that starts after is refused by the ACL rule.
	errs := make(chan error, 1)
	go func() {
		req := &structs.NodesClientAllocsRequest{Nodes: pairs}
		req.MinQueryIndex = second.Index + 12
		req.MaxQueryTime = int64(time.Minute)
		var resp structs.NodesClientAllocsResponse
		errs <- s.RPC("Node.GetClientAllocsBatch", req, &resp)
	}()
	rekeyed := a.Copy()
	rekeyed.SecretID = structs.GenerateUUID()
	must.NoError(t, s.State().UpsertNode(second.Index+13, rekeyed))
	select {
	case err := <-errs:
		must.Error(t, err)
		msg := err.Error()
		must.True(t, strings.Contains(msg, "node secret ID does not match") || strings.Contains(msg, structs.ErrPermissionDenied.Error()),
			must.Sprintf("refused for the old secret, not: %v", err))
	case <-time.After(30 * time.Second):
		t.Fatal("the batch watch did not wake on the node's new secret")
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

// A batch watch that follows its nodes answer by answer (as the node
// simulator does) ends with every node's allocs, while plans land on many
// of its nodes at once. A plan's commit wakes the query on the first of
// its nodes' channels, before the others have closed; an answer must not
// then claim the plan's index while leaving out a node the plan touched,
// or that node's allocs are never handed to it.
func TestGetClientAllocsBatch_FollowerMissesNoNode(t *testing.T) {
	s := testServer(t, func(c *Config) { c.MinHeartbeatTTL = 10 * time.Minute })
	waitForLeader(t, s)
	const numNodes = 1000
	latest, err := s.State().LatestIndex()
	must.NoError(t, err)
	index := latest + 100
	var pairs []structs.NodeSecret
	for range numNodes {
		n := mockNode(structs.GenerateUUID())
		index++
		must.NoError(t, s.State().UpsertNode(index, n))
		pairs = append(pairs, structs.NodeSecret{NodeID: n.ID, SecretID: n.SecretID})
	}
	job := mockJob("spread")
	index++
	must.NoError(t, s.State().UpsertJob(index, job))

	// The follower keeps, per node, the alloc IDs of the last answer that
	// listed the node, and asks again from each answer's index.
	seen := make(map[string]map[string]uint64)
	var seenMu sync.Mutex
	stop := make(chan struct{})
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		var min uint64
		for {
			select {
			case <-stop:
				return
			default:
			}
			req := &structs.NodesClientAllocsRequest{Nodes: pairs}
			req.MinQueryIndex = min
			req.MaxQueryTime = int64(200 * time.Millisecond)
			var resp structs.NodesClientAllocsResponse
			if err := s.RPC("Node.GetClientAllocsBatch", req, &resp); err != nil {
				continue
			}
			seenMu.Lock()
			for id, m := range resp.Allocs {
				seen[id] = m
			}
			seenMu.Unlock()
			min = resp.Index
		}
	}()

	// Each plan places one alloc on each of a run of nodes, so most
	// commits touch many nodes at once.
	want := make(map[string]map[string]uint64)
	for i := range 200 {
		index++
		var allocs []*structs.Allocation
		for k := range 50 + i%150 {
			nodeID := pairs[(i*7+k)%numNodes].NodeID
			a := &structs.Allocation{
				ID: structs.GenerateUUID(), Namespace: job.Namespace, NodeID: nodeID, JobID: job.ID, Job: job,
				TaskGroup: job.TaskGroups[0].Name, DesiredStatus: structs.AllocDesiredStatusRun,
				ClientStatus: structs.AllocClientStatusPending,
			}
			allocs = append(allocs, a)
			if want[nodeID] == nil {
				want[nodeID] = make(map[string]uint64)
			}
			want[nodeID][a.ID] = index
		}
		must.NoError(t, s.State().UpsertAllocs(index, allocs))
	}

	// When the wait fails, stop the follower so that its goroutine does
	// not outlive the test.
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
			<-followed
		}
	}()
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		seenMu.Lock()
		defer seenMu.Unlock()
		var missing []string
		for nodeID, m := range want {
			if len(seen[nodeID]) != len(m) {
				missing = append(missing, fmt.Sprintf("%s: %d of %d allocs", nodeID[:8], len(seen[nodeID]), len(m)))
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("the follower never learnt of every alloc; behind on %d nodes: %v", len(missing), missing)
		}
		return nil
	}), wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)))
	close(stop)
	<-followed
}
