package nomad

import (
	"fmt"
	"time"

	"github.com/nomadq/nomadq/nomad/heartbeat"
	"github.com/nomadq/nomadq/structs"
)

// heartbeater ties the timers to the server: an expired node is marked
// down through Raft, with node-update evals for its jobs.
type heartbeater struct {
	*heartbeat.Timers
	srv *Server
}

func newHeartbeater(s *Server) *heartbeater {
	h := &heartbeater{srv: s}
	h.Timers = heartbeat.NewTimers(s.config.MinHeartbeatTTL, s.config.MaxHeartbeatsPerSecond, s.config.HeartbeatGrace, h.invalidate)
	return h
}

// initialize gives every live node the failover TTL after a leader change,
// so clients have time to find the new leader before being marked down.
func (h *heartbeater) initialize() error {
	nodes, err := h.srv.State().Nodes(nil)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if n.TerminalStatus() {
			continue
		}
		h.ResetTo(n.ID, h.srv.config.FailoverHeartbeatTTL)
	}
	return nil
}

func (h *heartbeater) invalidate(nodeID string) {
	h.srv.logger.Warn("node heartbeat missed; marking node down", "node_id", nodeID)
	req := structs.NodeUpdateStatusRequest{
		NodeID:    nodeID,
		Status:    structs.NodeStatusDown,
		UpdatedAt: time.Now().UnixNano(),
		NodeEvent: &structs.NodeEvent{
			Message:   "Node heartbeat missed",
			Subsystem: "Cluster",
			Timestamp: time.Now(),
		},
	}
	// The leader acts for the node here, with its own management secret.
	req.AuthToken = h.srv.leaderACL
	var resp structs.NodeUpdateResponse
	if err := h.srv.RPC("Node.UpdateStatus", &req, &resp); err != nil {
		h.srv.logger.Error(fmt.Sprintf("mark node %s down", nodeID), "error", err)
	}
}
