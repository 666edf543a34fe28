package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// drainJobs is how many jobs the drain under failover queues.
const drainJobs = 200

// Three servers and two clients drain 200 queued batch jobs, each
// taking 45% of a node, four at a time (concurrent_placements = 4) while the leader is killed with
// SIGKILL three times in a row, each killed server coming back on its
// data dir before the next kill. Every acknowledged job is placed
// exactly once, on every server's state (no job with two allocs, none
// without one), and the jobs still queued at each failover keep their
// order on the next leader.
func TestFailover_QueueDrainThreeLeaderKills(t *testing.T) {
	longTests(t)
	ports := freePorts(t, 15)
	servers := startServers(t, ports[:9])
	var rpcAddr []string
	for _, s := range servers {
		rpcAddr = append(rpcAddr, s.rpc)
	}
	for i := range 2 {
		startAgent(t, agentSpec{name: fmt.Sprintf("client-%d", i), client: true, servers: rpcAddr,
			dataDir: t.TempDir(), http: ports[9+3*i], rpc: ports[10+3*i], serf: ports[11+3*i]})
	}
	leader := waitLeader(t, servers)
	c := leader.api(t)
	var nodeMem int
	waitFor(t, 60*time.Second, func() error {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return err
		}
		ready := 0
		for _, n := range nodes {
			if n.Status == "ready" {
				ready++
			}
		}
		if ready != 2 {
			return fmt.Errorf("%d of 2 nodes ready", ready)
		}
		n, _, err := c.Nodes().Info(nodes[0].ID, nil)
		if err != nil {
			return err
		}
		nodeMem = int(n.NodeResources.Memory.MemoryMB)
		return nil
	})
	body := map[string]any{"BatchQueue": map[string]any{"Enabled": true, "Order": "fifo", "ConcurrentPlacements": 4}}
	_, err := c.Raw().Write("/v1/operator/scheduler/configuration", body, nil, nil)
	must.NoError(t, err)

	// Acknowledged in this order; FIFO releases them in it. Each job
	// takes 45% of a node's memory, so two clients run four at a time
	// and the drain lasts a minute or more, long enough for three kills.
	var acked []string
	for i := range drainJobs {
		id := fmt.Sprintf("drain-%03d", i)
		job := batchJob(id, "sleep 1")
		mem := nodeMem * 45 / 100
		job.TaskGroups[0].Tasks[0].Resources.MemoryMB = &mem
		_, _, err := c.Jobs().Register(job, nil)
		must.NoError(t, err)
		acked = append(acked, id)
	}

	for kill := range 3 {
		// Let the drain move on between kills.
		target := (kill + 1) * drainJobs / 5
		waitFor(t, 120*time.Second, func() error {
			n, err := placedJobs(t, leader)
			if err != nil {
				return err
			}
			if n < target {
				return fmt.Errorf("%d of %d jobs placed", n, target)
			}
			return nil
		})
		n, _ := placedJobs(t, leader)
		t.Logf("kill %d: SIGKILL leader %s with %d jobs placed", kill+1, leader.name, n)
		leader.kill(syscall.SIGKILL)
		survivors := slices.DeleteFunc(slices.Clone(servers), func(a *agentProc) bool { return a == leader })
		next := waitLeader(t, survivors)
		waitFor(t, 60*time.Second, func() error { return queuedInOrder(t, next) })
		leader.start(t)
		leader = waitLeader(t, servers)
	}

	waitFor(t, 300*time.Second, func() error {
		n, err := placedJobs(t, leader)
		if err != nil {
			return err
		}
		if n < drainJobs {
			return fmt.Errorf("%d of %d jobs placed", n, drainJobs)
		}
		return nil
	})
	for _, s := range servers {
		waitFor(t, 60*time.Second, func() error { return placedOnce(t, s, acked) })
	}
}

// placedJobs counts the jobs with at least one alloc, on a's state.
func placedJobs(t *testing.T, a *agentProc) (int, error) {
	c := a.api(t)
	allocs, _, err := c.Allocations().List(&api.QueryOptions{AllowStale: true})
	if err != nil {
		return 0, err
	}
	jobs := map[string]bool{}
	for _, al := range allocs {
		jobs[al.JobID] = true
	}
	return len(jobs), nil
}

// queuedInOrder checks a's queue listing: the jobs still queued are in
// the order they were acknowledged in (their names count up).
func queuedInOrder(t *testing.T, a *agentProc) error {
	c := a.api(t)
	var rows []queueRow
	if _, err := c.Raw().Query("/v1/queue/jobs", &rows, nil); err != nil {
		return err
	}
	var queued []queueRow
	for _, r := range rows {
		if r.Status == "queued" {
			queued = append(queued, r)
		}
	}
	slices.SortFunc(queued, func(x, y queueRow) int { return x.Position - y.Position })
	for i := 1; i < len(queued); i++ {
		if drainIndex(queued[i-1].JobID) >= drainIndex(queued[i].JobID) {
			return fmt.Errorf("queued out of order on %s: %s before %s", a.name, queued[i-1].JobID, queued[i].JobID)
		}
	}
	return nil
}

func drainIndex(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "drain-"))
	return n
}

// placedOnce checks, on a's own state (stale reads), that every job in
// ids has exactly one alloc and that no alloc belongs to a job not in ids.
func placedOnce(t *testing.T, a *agentProc, ids []string) error {
	c := a.api(t)
	allocs, _, err := c.Allocations().List(&api.QueryOptions{AllowStale: true})
	if err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	per := map[string]int{}
	for _, al := range allocs {
		per[al.JobID]++
	}
	for _, id := range ids {
		if per[id] != 1 {
			return fmt.Errorf("%s: job %s has %d allocs, want exactly 1", a.name, id, per[id])
		}
		delete(per, id)
	}
	if len(per) > 0 {
		return fmt.Errorf("%s: allocs of jobs never acknowledged: %v", a.name, per)
	}
	return nil
}
