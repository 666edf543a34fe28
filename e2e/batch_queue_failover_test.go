package e2e

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// queueRow is the part of a GET /v1/queue/jobs entry this test reads.
type queueRow struct {
	Namespace      string
	JobID          string
	Status         string
	Reason         string
	Position       int
	EstimatedStart int64
}

// sizedJob is batchJob asking for memMB, with a max_run_duration when
// limit > 0.
func sizedJob(ns, id string, memMB int, limit time.Duration) *api.Job {
	job := batchJob(id, "sleep 120")
	job.Namespace = &ns
	job.TaskGroups[0].Tasks[0].Resources.MemoryMB = &memMB
	if limit > 0 {
		job.TaskGroups[0].MaxRunDuration = &limit
	}
	return job
}

// queueFailoverCluster starts three servers and a client, and answers
// the servers, the leader, an API client of the leader and the client
// node's memory once the node is ready.
func queueFailoverCluster(t *testing.T) ([]*agentProc, *agentProc, *api.Client, int) {
	t.Helper()
	ports := freePorts(t, 12)
	servers := startServers(t, ports[:9])
	var rpcAddr []string
	for _, s := range servers {
		rpcAddr = append(rpcAddr, s.rpc)
	}
	leader := waitLeader(t, servers)
	startAgent(t, agentSpec{name: "client", client: true, servers: rpcAddr, dataDir: t.TempDir(),
		http: ports[9], rpc: ports[10], serf: ports[11]})
	c := leader.api(t)

	var nodeMem int
	waitFor(t, 60*time.Second, func() error {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil || len(nodes) != 1 || nodes[0].Status != "ready" {
			return fmt.Errorf("no ready node yet: %v", err)
		}
		n, _, err := c.Nodes().Info(nodes[0].ID, nil)
		if err != nil {
			return err
		}
		nodeMem = int(n.NodeResources.Memory.MemoryMB)
		return nil
	})
	return servers, leader, c, nodeMem
}

// Three servers and a client; the queue is in the fair order with
// backfill. A big job waits for capacity behind a reservation, with
// jobs of two namespaces queued behind it. After the leader is killed,
// the new leader shows the same order, the same reservation and the
// same estimates: all of it is computed from Raft state.
func TestFailover_BatchQueueKeepsOrderAndReservation(t *testing.T) {
	longTests(t)
	servers, leader, c, nodeMem := queueFailoverCluster(t)
	body := map[string]any{"BatchQueue": map[string]any{"Enabled": true, "Order": "fair", "ConcurrentPlacements": 1}}
	_, err := c.Raw().Write("/v1/operator/scheduler/configuration", body, nil, nil)
	must.NoError(t, err)
	for _, ns := range []string{"a", "b"} {
		_, err := c.Namespaces().Register(&api.Namespace{Name: ns, Meta: map[string]string{"batch_queue_weight": "1"}}, nil)
		must.NoError(t, err)
	}

	// A filler holds 40% of the node for two minutes; the big job needs
	// 85% and waits for the filler's deadline.
	_, _, err = c.Jobs().Register(sizedJob("default", "filler", nodeMem*4/10, 2*time.Minute), nil)
	must.NoError(t, err)
	waitFor(t, 30*time.Second, func() error {
		allocs, _, err := c.Jobs().Allocations("filler", true, nil)
		if err != nil || len(allocs) == 0 {
			return fmt.Errorf("filler not placed yet: %v", err)
		}
		return nil
	})
	_, _, err = c.Jobs().Register(sizedJob("default", "big", nodeMem*85/100, 0), nil)
	must.NoError(t, err)
	for i := range 3 {
		for _, ns := range []string{"a", "b"} {
			_, _, err := c.Jobs().Register(sizedJob(ns, fmt.Sprintf("%s-%d", ns, i), nodeMem/20, 0), nil)
			must.NoError(t, err)
		}
	}
	// An operator's hold and top are Raft state too.
	_, err = c.Raw().Write("/v1/queue/job/a-2/hold?namespace=a", nil, nil, nil)
	must.NoError(t, err)
	_, err = c.Raw().Write("/v1/queue/job/b-2/top?namespace=b", nil, nil, nil)
	must.NoError(t, err)
	list := func(a *agentProc) ([]queueRow, error) {
		var rows []queueRow
		_, err := a.api(t).Raw().Query("/v1/queue/jobs", &rows, nil)
		return rows, err
	}
	var before []queueRow
	waitFor(t, 30*time.Second, func() error {
		rows, err := list(leader)
		if err != nil {
			return err
		}
		queued := 0
		reserved, held := false, false
		for _, r := range rows {
			if r.Status == "queued" {
				queued++
			}
			held = held || (r.JobID == "a-2" && r.Reason == "Held")
			if r.JobID == "big" && r.EstimatedStart > 0 {
				reserved = true
			}
		}
		if queued != 6 || !reserved || !held {
			return fmt.Errorf("want 6 queued behind a reserved big job, got %+v", rows)
		}
		before = rows
		return nil
	})
	t.Logf("before the failover: %+v", before)

	failoverKeeps(t, servers, leader, before, list)
}

// failoverKeeps kills the leader with SIGKILL and waits until the new
// leader reads (with read) what the old one read before, which it
// returns.
func failoverKeeps[T comparable](t *testing.T, servers []*agentProc, leader *agentProc, before []T, read func(*agentProc) ([]T, error)) *agentProc {
	t.Helper()
	leader.kill(syscall.SIGKILL)
	survivors := slices.DeleteFunc(slices.Clone(servers), func(a *agentProc) bool { return a == leader })
	newLeader := waitLeader(t, survivors)
	waitFor(t, 60*time.Second, func() error {
		after, err := read(newLeader)
		if err != nil {
			return err
		}
		if !slices.Equal(before, after) {
			return fmt.Errorf("moved in the failover:\nbefore %+v\nafter  %+v", before, after)
		}
		return nil
	})
	return newLeader
}
