package agent

import (
	"time"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/nomad"
)

// applyServerTuning carries the server block's garbage collection,
// heartbeat and Raft snapshot keys into the server's config; a key left
// at 0 keeps Nomad's default. The parser has refused values out of range.
func applyServerTuning(sc *nomad.Config, s *config.Server) {
	setDur := func(into *time.Duration, v time.Duration) {
		if v > 0 {
			*into = v
		}
	}
	setDur(&sc.NodeGCThreshold, s.NodeGCThreshold)
	setDur(&sc.JobGCInterval, s.JobGCInterval)
	setDur(&sc.JobGCThreshold, s.JobGCThreshold)
	setDur(&sc.EvalGCThreshold, s.EvalGCThreshold)
	setDur(&sc.BatchEvalGCThreshold, s.BatchEvalGCThreshold)
	setDur(&sc.HeartbeatGrace, s.HeartbeatGrace)
	setDur(&sc.MinHeartbeatTTL, s.MinHeartbeatTTL)
	setDur(&sc.FailoverHeartbeatTTL, s.FailoverHeartbeatTTL)
	if s.MaxHeartbeatsPerSecond > 0 {
		sc.MaxHeartbeatsPerSecond = s.MaxHeartbeatsPerSecond
	}
	if s.RaftSnapshotThreshold > 0 {
		sc.RaftSnapshotThreshold = uint64(s.RaftSnapshotThreshold)
	}
	setDur(&sc.RaftSnapshotInterval, s.RaftSnapshotInterval)
	if s.RaftTrailingLogs > 0 {
		sc.RaftTrailingLogs = uint64(s.RaftTrailingLogs)
	}
}
