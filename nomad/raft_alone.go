package nomad

import (
	"fmt"

	"github.com/hashicorp/raft"
)

// standIfAlone makes a server that is the only voter of its Raft
// configuration stand for election at once, instead of after a heartbeat
// timeout (1-2 s with the defaults) in which no other server can lead or
// even vote: after a restart the wait is pure delay before the server
// serves again. Raft's safety does not depend on timeouts, so this changes
// when the election happens, not its outcome.
//
// The heartbeat timeout is lowered to the leader lease timeout (the least
// Raft allows) and the shorter timeout starts the pending election at once;
// establishLeadership restores the configured one, which servers added
// later rely on.
func (s *Server) standIfAlone(conf raft.Config) error {
	future := s.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return fmt.Errorf("server: read raft configuration: %w", err)
	}
	if !onlyVoter(future.Configuration(), raft.ServerID(s.nodeID)) {
		return nil
	}
	configured := s.raft.ReloadableConfig()
	if conf.LeaderLeaseTimeout >= configured.HeartbeatTimeout {
		return nil
	}
	short := configured
	short.HeartbeatTimeout = conf.LeaderLeaseTimeout
	s.raftTimeouts = &configured
	if err := s.raft.ReloadConfig(short); err != nil {
		s.raftTimeouts = nil
		return fmt.Errorf("server: shorten raft heartbeat timeout: %w", err)
	}
	return nil
}

// restoreRaftTimeouts puts back the heartbeat timeout standIfAlone
// shortened. It runs under leaderLock.
func (s *Server) restoreRaftTimeouts() {
	if s.raftTimeouts == nil {
		return
	}
	if err := s.raft.ReloadConfig(*s.raftTimeouts); err != nil {
		s.logger.Error("restore raft heartbeat timeout", "error", err)
		return
	}
	s.raftTimeouts = nil
}

// onlyVoter reports whether id is the one voter of c.
func onlyVoter(c raft.Configuration, id raft.ServerID) bool {
	voters := 0
	self := false
	for _, srv := range c.Servers {
		if srv.Suffrage == raft.Voter {
			voters++
			self = self || srv.ID == id
		}
	}
	return voters == 1 && self
}
