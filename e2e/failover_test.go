package e2e

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// Three server agents as processes; the leader is killed with SIGKILL. A
// new leader accepts writes again, and every write acknowledged before the
// kill is on both survivors.
func TestFailover_SIGKILLLeader(t *testing.T) {
	longTests(t)
	agents := startServers(t, freePorts(t, 9))
	leader := waitLeader(t, agents)
	t.Logf("leader is %s", leader.name)

	// Writes through every agent (followers forward to the leader).
	acked := make(map[string]bool)
	for i := range 30 {
		id := fmt.Sprintf("job-%02d", i)
		_, _, err := agents[i%3].api(t).Jobs().Register(batchJob(id, "true"), nil)
		must.NoError(t, err)
		acked[id] = true
	}

	killed := time.Now()
	leader.kill(syscall.SIGKILL)
	var survivors []*agentProc
	for _, a := range agents {
		if a != leader {
			survivors = append(survivors, a)
		}
	}

	// Keep writing until a write is accepted again.
	var recovered time.Duration
	var mu sync.Mutex
	waitFor(t, 60*time.Second, func() error {
		id := fmt.Sprintf("after-%d", time.Now().UnixNano())
		_, _, err := survivors[0].api(t).Jobs().Register(batchJob(id, "true"), nil)
		if err != nil {
			return err
		}
		mu.Lock()
		acked[id] = true
		recovered = time.Since(killed)
		mu.Unlock()
		return nil
	})
	t.Logf("writes accepted again %s after SIGKILL of the leader", recovered)
	newLeader := waitLeader(t, survivors)
	t.Logf("new leader is %s", newLeader.name)

	for _, a := range survivors {
		c := a.api(t)
		waitFor(t, 30*time.Second, func() error {
			for id := range acked {
				job, _, err := c.Jobs().Info(id, &api.QueryOptions{AllowStale: true})
				if err != nil {
					return fmt.Errorf("%s on %s: %w", id, a.name, err)
				}
				if *job.ID != id {
					return fmt.Errorf("got job %s for %s", *job.ID, id)
				}
			}
			return nil
		})
	}
}

// startServers starts three server agents on ports (http, rpc and serf
// of each, in turn) that join each other.
func startServers(t *testing.T, ports []int) []*agentProc {
	var joinAddr []string
	for i := range 3 {
		joinAddr = append(joinAddr, fmt.Sprintf("127.0.0.1:%d", ports[3*i+2]))
	}
	var agents []*agentProc
	for i := range 3 {
		agents = append(agents, startAgent(t, agentSpec{
			name: fmt.Sprintf("server-%d", i), server: true, expect: 3, join: joinAddr,
			dataDir: t.TempDir(), http: ports[3*i], rpc: ports[3*i+1], serf: ports[3*i+2],
		}))
	}
	return agents
}

// waitLeader waits until every agent names the same leader and returns it.
func waitLeader(t *testing.T, agents []*agentProc) *agentProc {
	t.Helper()
	var leader *agentProc
	waitFor(t, 60*time.Second, func() error {
		var addr string
		for _, a := range agents {
			l, err := a.api(t).Status().Leader()
			if err != nil {
				return err
			}
			if l == "" || (addr != "" && l != addr) {
				return fmt.Errorf("no agreed leader yet (%q, %q)", addr, l)
			}
			addr = l
		}
		for _, a := range agents {
			if a.rpc == addr {
				leader = a
				return nil
			}
		}
		return fmt.Errorf("leader %s is none of the agents", addr)
	})
	return leader
}
