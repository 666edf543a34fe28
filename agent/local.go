package agent

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

// localAgentSeq names local agents apart within one process.
var localAgentSeq atomic.Int64

// StartLocal starts a dev agent on 127.0.0.1 with every port picked by the
// kernel and a name of its own, after modify (when set) edits its config,
// and waits up to timeout until it serves: its server leads with a
// readable scheduler configuration and its client's node is ready. On an
// error nothing is left running; otherwise the caller shuts it down.
// Tests of whole agents start theirs with it (agenttest.New, and
// NewTestAgent inside this package), so the production binary does not
// link the testing package.
func StartLocal(modify func(*config.Config), logOutput io.Writer, timeout time.Duration) (*Agent, error) {
	cfg := config.Dev()
	cfg.Name = fmt.Sprintf("local-agent-%d", localAgentSeq.Add(1))
	cfg.Ports = &config.Ports{}
	cfg.LogLevel = "WARN"
	cfg.Server.NumSchedulers = 2
	if modify != nil {
		modify(cfg)
	}
	a, err := New(cfg, logOutput)
	if err != nil {
		return nil, fmt.Errorf("start local agent: %w", err)
	}
	if err := a.waitReady(time.Now().Add(timeout)); err != nil {
		return nil, errors.Join(err, a.Shutdown())
	}
	return a, nil
}

// waitReady polls until the agent's server leads with a readable
// scheduler configuration and its client's node is ready, or deadline.
func (a *Agent) waitReady(deadline time.Time) error {
	until := func(what string, ok func() bool) error {
		for !ok() {
			if time.Now().After(deadline) {
				return fmt.Errorf("local agent %s: %s", a.config.Name, what)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return nil
	}
	if a.server != nil {
		if err := until("no leader", func() bool { return a.server.Leader() != "" }); err != nil {
			return err
		}
		// Leadership is established once the scheduler config is readable
		// (read from state: with ACLs on, the agent holds no token).
		err := until("scheduler configuration not readable", func() bool {
			_, sc, err := a.server.State().SchedulerConfig()
			return err == nil && sc != nil
		})
		if err != nil {
			return err
		}
		// The leader writes the root keyring next; Nomad's own api test
		// harness waits for the JWKS to list a key, and so does this.
		err = until("root keyring not written", func() bool {
			var reply structs.KeyringListPublicResponse
			err := a.rpc("Keyring.ListPublic", &structs.GenericRequest{}, &reply)
			return err == nil && len(reply.PublicKeys) > 0
		})
		if err != nil {
			return err
		}
	}
	if a.client != nil {
		return until("client node not ready", func() bool {
			var reply structs.SingleNodeResponse
			args := &structs.NodeSpecificRequest{NodeID: a.client.NodeID()}
			// The node's secret authenticates it when ACLs are on.
			args.AuthToken = a.client.NodeSecret()
			err := a.rpc("Node.Get", args, &reply)
			return err == nil && reply.Node != nil && reply.Node.Status == structs.NodeStatusReady
		})
	}
	return nil
}
