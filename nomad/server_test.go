package nomad

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/msgpackrpc"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// registerNode registers a fresh mock node through the Node.Register RPC
// and returns it.
func registerNode(t *testing.T, s *Server) *structs.Node {
	t.Helper()
	node := mockNode(structs.GenerateUUID())
	var resp structs.NodeUpdateResponse
	must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: node}, &resp))
	return node
}

// serverWithNode starts a dev server, waits for its leadership and
// registers one node whose heartbeat outlives the test.
func serverWithNode(t *testing.T) (*Server, *structs.Node) {
	t.Helper()
	s := testServer(t, func(c *Config) { c.MinHeartbeatTTL = 10 * time.Minute })
	waitForLeader(t, s)
	return s, registerNode(t, s)
}

func registerJob(t *testing.T, s *Server, job *structs.Job) *structs.JobRegisterResponse {
	t.Helper()
	var resp structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &resp))
	return &resp
}

func TestServer_DevSingleServerElectsItselfAndAcceptsWrites(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)

	resp := registerJob(t, s, mockJob("hello"))
	must.NotEq(t, "", resp.EvalID)
	must.Positive(t, resp.Index)

	var got structs.SingleJobResponse
	must.NoError(t, s.RPC("Job.Get", &structs.JobSpecificRequest{JobID: "hello"}, &got))
	must.NotNil(t, got.Job)
	must.Eq(t, "hello", got.Job.ID)
	must.Eq(t, resp.JobModifyIndex, got.Job.JobModifyIndex)

	var eval structs.SingleEvalResponse
	must.NoError(t, s.RPC("Eval.Get", &structs.EvalSpecificRequest{EvalID: resp.EvalID}, &eval))
	must.NotNil(t, eval.Eval)
	must.Eq(t, structs.EvalTriggerJobRegister, eval.Eval.TriggeredBy)
}

func TestCluster_ThreeServersFailoverKeepsAcknowledgedWrites(t *testing.T) {
	s1 := testServer(t, clusterConfig(t, 3, nil))
	join := []string{s1.SerfAddr()}
	s2 := testServer(t, clusterConfig(t, 3, join))
	s3 := testServer(t, clusterConfig(t, 3, join))
	servers := []*Server{s1, s2, s3}
	leader := waitForLeader(t, servers...)

	var followers []*Server
	for _, s := range servers {
		if s != leader {
			followers = append(followers, s)
		}
	}

	// A write sent to a follower is forwarded to the leader.
	var nodeResp structs.NodeUpdateResponse
	must.NoError(t, followers[0].RPC("Node.Register", &structs.NodeRegisterRequest{Node: mockNode(structs.GenerateUUID())}, &nodeResp))
	must.Positive(t, nodeResp.Index)

	acked := map[string]uint64{}
	for i := range 10 {
		id := fmt.Sprintf("job-%d", i)
		resp := registerJob(t, servers[i%3], mockJob(id))
		acked[id] = resp.Index
	}

	must.NoError(t, leader.Shutdown())
	var survivors []*Server
	for _, s := range servers {
		if s != leader {
			survivors = append(survivors, s)
		}
	}
	start := time.Now()
	newLeader := waitForLeader(t, survivors...)
	t.Logf("new leader elected %s after the old one stopped", time.Since(start))

	// The new leader takes writes.
	resp := registerJob(t, survivors[0], mockJob("after-failover"))
	acked["after-failover"] = resp.Index
	must.True(t, newLeader.IsLeader())

	// Every acknowledged write is on every survivor.
	var maxIdx uint64
	for _, idx := range acked {
		maxIdx = max(maxIdx, idx)
	}
	for _, s := range survivors {
		waitForIndex(t, s, maxIdx)
		for id := range acked {
			job, err := s.State().JobByID(nil, structs.DefaultNamespace, id)
			must.NoError(t, err)
			must.NotNil(t, job, must.Sprintf("job %s missing on %s", id, s.config.NodeName))
		}
		node, err := s.State().Nodes(nil)
		must.NoError(t, err)
		must.Len(t, 1, node)
	}
}

func TestServer_RestartFromDataDirHasIdenticalState(t *testing.T) {
	dir := t.TempDir()
	cfg := func(c *Config) {
		c.DevMode = false
		c.DataDir = dir
		// Snapshot often so the restart restores a snapshot plus a log tail.
		c.RaftSnapshotThreshold = 8
		c.RaftSnapshotInterval = 50 * time.Millisecond
		c.RaftTrailingLogs = 4
		c.NumSchedulers = 0
	}
	s1 := testServer(t, cfg)
	waitForLeader(t, s1)
	for i := range 30 {
		registerJob(t, s1, mockJob(fmt.Sprintf("job-%d", i)))
	}
	var nr structs.NodeUpdateResponse
	must.NoError(t, s1.RPC("Node.Register", &structs.NodeRegisterRequest{Node: mockNode(structs.GenerateUUID())}, &nr))
	must.NoError(t, s1.raft.Snapshot().Error())
	registerJob(t, s1, mockJob("after-snapshot"))

	before := dumpState(t, s1)
	must.NoError(t, s1.Shutdown())

	s2 := testServer(t, cfg)
	waitForLeader(t, s2)
	waitForIndex(t, s2, before.index)
	after := dumpState(t, s2)
	must.Eq(t, before.jobs, after.jobs)
	must.Eq(t, before.nodes, after.nodes)
	must.Eq(t, before.summaries, after.summaries)
	// The new leader may add evals of its own (none are periodic here),
	// so compare the ones that existed.
	for id, e := range before.evals {
		must.Eq(t, e, after.evals[id])
	}
}

type stateDump struct {
	index     uint64
	jobs      map[string]*structs.Job
	evals     map[string]*structs.Evaluation
	nodes     map[string]*structs.Node
	summaries map[string]*structs.JobSummary
}

func dumpState(t *testing.T, s *Server) stateDump {
	t.Helper()
	st := s.State()
	d := stateDump{
		jobs:      map[string]*structs.Job{},
		evals:     map[string]*structs.Evaluation{},
		nodes:     map[string]*structs.Node{},
		summaries: map[string]*structs.JobSummary{},
	}
	var err error
	d.index, err = st.LatestIndex()
	must.NoError(t, err)
	jobs, err := st.Jobs(nil)
	must.NoError(t, err)
	for _, j := range jobs {
		d.jobs[j.ID] = j
		sum, err := st.JobSummaryByID(nil, j.Namespace, j.ID)
		must.NoError(t, err)
		d.summaries[j.ID] = sum
	}
	evals, err := st.Evals(nil)
	must.NoError(t, err)
	for _, e := range evals {
		d.evals[e.ID] = e
	}
	nodes, err := st.Nodes(nil)
	must.NoError(t, err)
	for _, n := range nodes {
		d.nodes[n.ID] = n
	}
	return d
}

func TestRPC_BadInputWritesNothing(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)
	waitForKeyring(t, s)
	// What a bad request could write: jobs, their summaries, evals. The
	// leader's own writes (keyring, autopilot, ...) may still land
	// meanwhile, so the Raft index is not compared.
	before := dumpState(t, s)
	before.index = 0

	t.Run("invalid job", func(t *testing.T) {
		job := mockJob("bad")
		job.Type = structs.JobTypeService
		var resp structs.JobRegisterResponse
		err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &resp)
		must.ErrorContains(t, err, `max_run_duration is only allowed for batch and sysbatch jobs, not service jobs`)
	})
	t.Run("missing job", func(t *testing.T) {
		var resp structs.JobRegisterResponse
		code, msg, ok := structs.CodeFromRPCCodedErr(s.RPC("Job.Register", &structs.JobRegisterRequest{}, &resp))
		must.True(t, ok)
		must.Eq(t, http.StatusBadRequest, code)
		must.Eq(t, "Job must be specified", msg)
	})
	t.Run("unknown method over TCP", func(t *testing.T) {
		pool := msgpackrpc.NewPool(time.Second)
		defer pool.Shutdown()
		var out structs.GenericResponse
		err := pool.Call(t.Context(), s.RPCAddr().String(), "Job.Nope", &structs.GenericRequest{}, &out)
		must.ErrorContains(t, err, "can't find method Job.Nope")
	})
	t.Run("malformed body over TCP", func(t *testing.T) {
		conn, err := net.Dial("tcp", s.RPCAddr().String())
		must.NoError(t, err)
		defer conn.Close()
		_, err = conn.Write(append([]byte{msgpackrpc.ConnRPC}, []byte("\xc1\xc1\xc1 this is not msgpack")...))
		must.NoError(t, err)
		// The server drops the connection rather than guess.
		must.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		buf := make([]byte, 64)
		_, err = conn.Read(buf)
		must.Error(t, err)
	})
	t.Run("unknown first byte", func(t *testing.T) {
		conn, err := net.Dial("tcp", s.RPCAddr().String())
		must.NoError(t, err)
		defer conn.Close()
		_, err = conn.Write([]byte{0x7f})
		must.NoError(t, err)
		must.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		_, err = conn.Read(make([]byte, 1))
		must.Error(t, err)
	})
	after := dumpState(t, s)
	after.index = 0
	must.Eq(t, before.jobs, after.jobs)
	must.Eq(t, before.evals, after.evals)
	must.Eq(t, before.summaries, after.summaries)
}

func TestJobRegister_EnforceIndexWording(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)

	var resp structs.JobRegisterResponse
	err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: mockJob("x"), EnforceIndex: true, JobModifyIndex: 5}, &resp)
	mustRefuse(t, err, "Enforcing job modify index 5: job does not exist")

	first := registerJob(t, s, mockJob("x"))
	err = s.RPC("Job.Register", &structs.JobRegisterRequest{Job: mockJob("x"), EnforceIndex: true}, &resp)
	mustRefuse(t, err, "Enforcing job modify index 0: job already exists")

	err = s.RPC("Job.Register", &structs.JobRegisterRequest{Job: mockJob("x"), EnforceIndex: true, JobModifyIndex: first.JobModifyIndex + 100}, &resp)
	mustRefuse(t, err, fmt.Sprintf("Enforcing job modify index %d: job exists with conflicting job modify index: %d", first.JobModifyIndex+100, first.JobModifyIndex))

	changed := mockJob("x")
	changed.Priority = 70
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: changed, EnforceIndex: true, JobModifyIndex: first.JobModifyIndex}, &resp))
	must.Greater(t, first.JobModifyIndex, resp.JobModifyIndex)
}

func TestJobRegister_UnchangedReRegistrationOnlyCreatesEval(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)

	first := registerJob(t, s, mockJob("same"))
	second := registerJob(t, s, mockJob("same"))
	must.Eq(t, first.JobModifyIndex, second.JobModifyIndex)
	must.NotEq(t, first.EvalID, second.EvalID)

	job, err := s.State().JobByID(nil, structs.DefaultNamespace, "same")
	must.NoError(t, err)
	must.Eq(t, uint64(0), job.Version)
	evals, err := s.State().EvalsByJob(nil, structs.DefaultNamespace, "same")
	must.NoError(t, err)
	must.Len(t, 2, evals)
}

func TestBlockingQuery_WakesOnJobWrite(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)
	first := registerJob(t, s, mockJob("watched"))

	type result struct {
		resp structs.SingleJobResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.err = s.RPC("Job.Get", &structs.JobSpecificRequest{
			JobID:        "watched",
			QueryOptions: structs.QueryOptions{MinQueryIndex: first.Index, MaxQueryTime: int64(time.Minute)},
		}, &r.resp)
		done <- r
	}()

	changed := mockJob("watched")
	changed.Priority = 80
	second := registerJob(t, s, changed)

	select {
	case r := <-done:
		must.NoError(t, r.err)
		must.Eq(t, 80, r.resp.Job.Priority)
		must.Eq(t, second.Index, r.resp.Index)
	case <-time.After(30 * time.Second):
		t.Fatal("blocking query did not wake on the job write")
	}
}

func TestBlockingQuery_TimesOutWithUnchangedIndex(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)
	first := registerJob(t, s, mockJob("quiet"))

	var resp structs.SingleJobResponse
	err := s.RPC("Job.Get", &structs.JobSpecificRequest{
		JobID:        "quiet",
		QueryOptions: structs.QueryOptions{MinQueryIndex: first.Index, MaxQueryTime: int64(50 * time.Millisecond)},
	}, &resp)
	must.NoError(t, err)
	must.Eq(t, first.Index, resp.Index)
}

// A dev server's snapshots cost nothing to take: the state is encoded
// only when a snapshot is read, and then as it was at the snapshot's
// index, whatever was written since.
func TestDevServer_SnapshotEncodesTheStateOnlyWhenRead(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	for i := range 300 {
		_, _, err := s.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mockJob(fmt.Sprintf("job-%d", i))})
		must.NoError(t, err)
	}
	future := s.raft.Snapshot()
	must.NoError(t, future.Error())
	list, err := s.raftSnaps.List()
	must.NoError(t, err)
	must.SliceLen(t, 1, list)
	must.Eq(t, int64(0), list[0].Size, must.Sprint("the snapshot was encoded when taken"))
	// The log before the snapshot is compacted all the same.
	first, err := s.raftStore.FirstIndex()
	must.NoError(t, err)
	must.Greater(t, 1, first)

	for i := range 50 {
		_, _, err := s.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mockJob(fmt.Sprintf("late-%d", i))})
		must.NoError(t, err)
	}
	meta, rc, err := future.Open()
	must.NoError(t, err)
	defer rc.Close()
	must.Positive(t, meta.Size)
	restored, err := state.RestoreFrom(rc)
	must.NoError(t, err)
	jobs, err := restored.Jobs(nil)
	must.NoError(t, err)
	must.SliceLen(t, 300, jobs, must.Sprint("the snapshot holds the state at its index, not the jobs written after it"))
	list, err = s.raftSnaps.List()
	must.NoError(t, err)
	must.Eq(t, meta.Size, list[0].Size)
}
