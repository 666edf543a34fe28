package nomad

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/structs"
)

func queueList(t *testing.T, s *Server) []*structs.BatchQueueListEntry {
	t.Helper()
	var reply structs.BatchQueueListResponse
	must.NoError(t, s.RPC("Queue.List", &structs.BatchQueueListRequest{}, &reply))
	return reply.Entries
}

// TestBatchQueue_LeaderFailover queues 20 jobs behind a full node on a
// three-server cluster, stops the leader while three are placing, and
// checks that the new leader rebuilds the same queue, releases the rest in
// order and places every job exactly once.
func TestBatchQueue_LeaderFailover(t *testing.T) {
	withQueue := func(c *Config) {
		c.DefaultSchedulerConfig = structs.DefaultSchedulerConfiguration()
		c.DefaultSchedulerConfig.BatchQueue = structs.BatchQueueConfig{
			Enabled: true, Order: structs.BatchQueueOrderFIFO, ConcurrentPlacements: 3, WorkloadTimeout: time.Hour,
		}
	}
	both := func(a, b func(*Config)) func(*Config) { return func(c *Config) { a(c); b(c) } }
	s1 := testServer(t, both(clusterConfig(t, 3, nil), withQueue))
	join := []string{s1.SerfAddr()}
	s2 := testServer(t, both(clusterConfig(t, 3, join), withQueue))
	s3 := testServer(t, both(clusterConfig(t, 3, join), withQueue))
	servers := []*Server{s1, s2, s3}
	leader := waitForLeader(t, servers...)

	var nr structs.NodeUpdateResponse
	must.NoError(t, leader.RPC("Node.Register", &structs.NodeRegisterRequest{Node: mockNode(structs.GenerateUUID())}, &nr))
	hog := mockJob("hog")
	hog.TaskGroups[0].Tasks[0].Resources.CPU = 4000
	registerJob(t, leader, hog)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		allocs, _ := leader.State().AllocsByJob(nil, structs.DefaultNamespace, "hog", true)
		return len(allocs) == 1 && len(queueList(t, leader)) == 0
	}), wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)))

	// 200 jobs in make e2e-long, 20 in make test.
	n := 20
	if os.Getenv("NOMADQ_E2E_LONG") == "1" {
		n = 200
	}
	var ids []string
	for i := range n {
		id := fmt.Sprintf("job-%02d", i)
		ids = append(ids, id)
		registerJob(t, servers[i%3], mockJob(id))
	}
	var before []*structs.BatchQueueListEntry
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		before = queueList(t, leader)
		placing := 0
		for _, e := range before {
			if e.Status == structs.BatchQueueStatusPlacing {
				placing++
			}
		}
		return len(before) == n && placing == 3
	}), wait.Timeout(60*time.Second), wait.Gap(10*time.Millisecond)))

	must.NoError(t, leader.Shutdown())
	var survivors []*Server
	for _, s := range servers {
		if s != leader {
			survivors = append(survivors, s)
		}
	}
	newLeader := waitForLeader(t, survivors...)

	// The rebuilt queue has the same entries, order and statuses; a
	// follower forwards the read.
	var after []*structs.BatchQueueListEntry
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		after = queueList(t, survivors[0])
		return len(after) == n
	}), wait.Timeout(60*time.Second), wait.Gap(10*time.Millisecond)))
	for i := range before {
		must.Eq(t, before[i].JobID, after[i].JobID)
		must.Eq(t, before[i].Status, after[i].Status)
		must.Eq(t, before[i].Position, after[i].Position)
	}
	for i, e := range after[:n-3] {
		must.Eq(t, ids[i+3], e.JobID)
		must.Eq(t, i+1, e.Position)
	}

	// Capacity arrives (a node holds 40 of these jobs): everything is
	// placed, each job exactly once. The nodes heartbeat as clients do:
	// without it they go down after their TTL and grace (20 s), and 200
	// jobs through three slots on a loaded 2-core machine can take longer.
	var nodes []*structs.Node
	for range n/40 + 1 {
		node := mockNode(structs.GenerateUUID())
		must.NoError(t, newLeader.RPC("Node.Register", &structs.NodeRegisterRequest{Node: node}, &nr))
		nodes = append(nodes, node)
	}
	stop := make(chan struct{})
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for _, node := range nodes {
				var resp structs.NodeUpdateResponse
				_ = newLeader.RPC("Node.UpdateStatus", &structs.NodeUpdateStatusRequest{NodeID: node.ID, Status: structs.NodeStatusReady,
					WriteRequest: structs.WriteRequest{Region: structs.DefaultRegion, AuthToken: node.SecretID}}, &resp)
			}
		}
	}()
	defer func() { close(stop); <-beating }()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return len(queueList(t, newLeader)) == 0
	}), wait.Timeout(2*time.Minute), wait.Gap(20*time.Millisecond)))
	for _, id := range ids {
		allocs, err := newLeader.State().AllocsByJob(nil, structs.DefaultNamespace, id, true)
		must.NoError(t, err)
		must.Len(t, 1, allocs, must.Sprintf("job %s", id))
	}
}

// The leader seeds the default scheduler configuration only when none is
// stored: a seed that lands after an operator's set-config (the leader
// read "none" just before) leaves the operator's queue settings in force.
func TestSchedulerConfigSeedDoesNotOverwrite(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	cfg := structs.DefaultSchedulerConfiguration()
	cfg.BatchQueue = structs.BatchQueueConfig{Enabled: true, Order: structs.BatchQueueOrderPriority, ConcurrentPlacements: 4, WorkloadTimeout: time.Minute}
	var reply structs.SchedulerSetConfigurationResponse
	must.NoError(t, s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: *cfg}, &reply))

	stale := structs.DefaultSchedulerConfiguration()
	stale.ModifyIndex = 7 // whatever the caller's copy says, the seed checks for none
	resp, _, err := s.raftApply(structs.SchedulerConfigRequestType, seedSchedulerConfig(stale))
	must.NoError(t, err)
	must.Eq(t, false, resp.(bool))
	_, got, err := s.State().SchedulerConfig()
	must.NoError(t, err)
	must.Eq(t, cfg.BatchQueue, got.BatchQueue)
}

// The queue index is leader-local and starts again on a new leader. A
// blocking read holding an index from the old leader is answered at once
// with the new leader's index, not after its whole wait.
func TestBatchQueue_BlockingReadAfterIndexReset(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	idx, _ := s.batchQueue.Index()
	for _, method := range []string{"Queue.List", "Queue.Status"} {
		args := &structs.BatchQueueListRequest{QueryOptions: structs.QueryOptions{
			MinQueryIndex: idx + 1000, MaxQueryTime: int64(time.Minute)}}
		start := time.Now()
		var meta structs.QueryMeta
		if method == "Queue.List" {
			var reply structs.BatchQueueListResponse
			must.NoError(t, s.RPC(method, args, &reply))
			meta = reply.QueryMeta
		} else {
			var reply structs.BatchQueueStatusResponse
			must.NoError(t, s.RPC(method, args, &reply))
			meta = reply.QueryMeta
		}
		must.Less(t, 30*time.Second, time.Since(start), must.Sprintf("%s waited for an index this leader never had", method))
		must.Less(t, idx+1000, meta.Index)
	}
}
