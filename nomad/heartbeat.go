package nomad

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// heartbeatTimers tracks one expiry timer per node on the leader. It is a
// small component of its own so its timing can be tested in fake time.
type heartbeatTimers struct {
	minTTL       time.Duration
	maxPerSecond float64
	grace        time.Duration

	// stagger returns a random duration in [0, d); tests inject their own.
	stagger func(d time.Duration) time.Duration

	// expire is called, without the lock, when a node's timer fires.
	expire func(nodeID string)

	mu     sync.Mutex
	timers map[string]*time.Timer
}

func newHeartbeatTimers(minTTL time.Duration, maxPerSecond float64, grace time.Duration, expire func(string)) *heartbeatTimers {
	return &heartbeatTimers{
		minTTL:       minTTL,
		maxPerSecond: maxPerSecond,
		grace:        grace,
		stagger:      func(d time.Duration) time.Duration { return time.Duration(rand.Int64N(int64(d))) },
		expire:       expire,
		timers:       make(map[string]*time.Timer),
	}
}

// reset (re)arms the node's timer and returns the TTL to hand the client:
// max(minTTL, nodes/maxPerSecond) plus a random stagger of up to that, so
// heartbeats spread out. The node is expired after TTL + grace.
func (h *heartbeatTimers) reset(nodeID string) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	base := h.minTTL
	if h.maxPerSecond > 0 {
		if d := time.Duration(float64(len(h.timers)) / h.maxPerSecond * float64(time.Second)); d > base {
			base = d
		}
	}
	ttl := base + h.stagger(base)
	h.arm(nodeID, ttl+h.grace)
	return ttl
}

// resetTo arms the node's timer to expire after exactly d (failover grace).
func (h *heartbeatTimers) resetTo(nodeID string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.arm(nodeID, d)
}

func (h *heartbeatTimers) arm(nodeID string, d time.Duration) {
	if t, ok := h.timers[nodeID]; ok {
		t.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		h.mu.Lock()
		current := h.timers[nodeID] == t
		if current {
			delete(h.timers, nodeID)
		}
		h.mu.Unlock()
		if current {
			h.expire(nodeID)
		}
	})
	h.timers[nodeID] = t
}

// remove stops tracking the node.
func (h *heartbeatTimers) remove(nodeID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.timers[nodeID]; ok {
		t.Stop()
		delete(h.timers, nodeID)
	}
}

// clear stops every timer.
func (h *heartbeatTimers) clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, t := range h.timers {
		t.Stop()
		delete(h.timers, id)
	}
}

// count is the number of tracked nodes.
func (h *heartbeatTimers) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.timers)
}

// heartbeater ties the timers to the server: an expired node is marked
// down through Raft, with node-update evals for its jobs.
type heartbeater struct {
	*heartbeatTimers
	srv *Server
}

func newHeartbeater(s *Server) *heartbeater {
	h := &heartbeater{srv: s}
	h.heartbeatTimers = newHeartbeatTimers(s.config.MinHeartbeatTTL, s.config.MaxHeartbeatsPerSecond, s.config.HeartbeatGrace, h.invalidate)
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
		h.resetTo(n.ID, h.srv.config.FailoverHeartbeatTTL)
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
