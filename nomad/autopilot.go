package nomad

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// autopilotInterval is how often the leader judges server health, which
// is what makes StableSince mean "healthy since about then".
const autopilotInterval = time.Second

// AutopilotGetConfiguration reads the autopilot configuration.
func (o *Operator) AutopilotGetConfiguration(args *structs.GenericRequest, reply *structs.AutopilotConfigResponse) error {
	if done, err := o.srv.forward("Operator.AutopilotGetConfiguration", args.QueryOptions, args, reply); done {
		return err
	}
	return o.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index, cfg, err := st.AutopilotConfig(ws)
		if err != nil {
			return 0, err
		}
		if cfg == nil {
			return 0, fmt.Errorf("autopilot config not initialized yet")
		}
		reply.Config = cfg
		return index, nil
	})
}

// AutopilotSetConfiguration replaces the autopilot configuration, with a
// check-and-set on Config.ModifyIndex when CAS is set.
func (o *Operator) AutopilotSetConfiguration(args *structs.AutopilotSetConfigRequest, reply *structs.AutopilotSetConfigResponse) error {
	if done, err := o.srv.forward("Operator.AutopilotSetConfiguration", args.WriteRequest, args, reply); done {
		return err
	}
	if err := args.Config.Validate(); err != nil {
		return err
	}
	resp, index, err := o.srv.raftApply(structs.AutopilotRequestType, args)
	if err != nil {
		return fmt.Errorf("set autopilot configuration: %w", err)
	}
	reply.Updated = true
	if ok, isBool := resp.(bool); isBool {
		reply.Updated = ok
	}
	reply.Index = index
	return nil
}

// ServerHealth judges every server of the Raft configuration, on the
// leader.
func (o *Operator) ServerHealth(args *structs.GenericRequest, reply *structs.OperatorHealthReply) error {
	if done, err := o.srv.forward("Operator.ServerHealth", args.QueryOptions, args, reply); done {
		return err
	}
	h, err := o.srv.serverHealth()
	if err != nil {
		return err
	}
	*reply = *h
	return nil
}

// initAutopilotConfig stores Nomad's default autopilot configuration when
// the cluster has none yet (a check-and-set against "none", so that an
// operator's write in between wins).
func (s *Server) initAutopilotConfig() error {
	_, stored, err := s.State().AutopilotConfig(nil)
	if err != nil || stored != nil {
		return err
	}
	_, _, err = s.raftApply(structs.AutopilotRequestType, &structs.AutopilotSetConfigRequest{Config: *structs.DefaultAutopilotConfig(), CAS: true})
	return err
}

// autopilotConfig is the stored configuration, or the defaults before
// the first leader stored them.
func (s *Server) autopilotConfig() *structs.AutopilotConfig {
	_, cfg, err := s.State().AutopilotConfig(nil)
	if err != nil || cfg == nil {
		return structs.DefaultAutopilotConfig()
	}
	return cfg
}

// autopilotLoop judges server health every autopilotInterval while this
// server leads, so that each server's StableSince is when it last became
// healthy.
func (s *Server) autopilotLoop(ctx context.Context) {
	if err := s.initAutopilotConfig(); err != nil {
		s.logger.Error("failed to store the default autopilot configuration", "error", err)
	}
	s.autopilot.reset()
	tick := time.NewTicker(autopilotInterval)
	defer tick.Stop()
	for {
		if _, err := s.serverHealth(); err != nil && ctx.Err() == nil {
			s.logger.Debug("autopilot health check failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// autopilotHealth remembers, per server, whether it was healthy at the
// last check and since when.
type autopilotHealth struct {
	mu    sync.Mutex
	marks map[string]healthMark
}

type healthMark struct {
	healthy bool
	since   time.Time
}

func newAutopilotHealth() *autopilotHealth {
	return &autopilotHealth{marks: make(map[string]healthMark)}
}

func (a *autopilotHealth) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.marks = make(map[string]healthMark)
}

// observe records a server's health at now and returns since when it has
// had that health.
func (a *autopilotHealth) observe(id string, healthy bool, now time.Time) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	m, ok := a.marks[id]
	if !ok || m.healthy != healthy {
		m = healthMark{healthy: healthy, since: now}
		a.marks[id] = m
	}
	return m.since
}

// judgeServer decides a server's health from its serf status and its Raft
// stats compared with the leader's, as Nomad's autopilot does: alive, in
// contact with the leader within LastContactThreshold, on the leader's
// term, and at most MaxTrailingLogs entries behind.
func judgeServer(cfg *structs.AutopilotConfig, isLeader bool, serfStatus serf.MemberStatus, stats structs.RaftStats, statsErr error, leader structs.RaftStats) bool {
	if serfStatus != serf.StatusAlive || statsErr != nil {
		return false
	}
	if !isLeader && (stats.LastContact < 0 || stats.LastContact > cfg.LastContactThreshold) {
		return false
	}
	if stats.LastTerm != leader.LastTerm {
		return false
	}
	return stats.LastIndex+cfg.MaxTrailingLogs >= leader.LastIndex
}

// serverHealth judges every server of the Raft configuration; only the
// leader can.
func (s *Server) serverHealth() (*structs.OperatorHealthReply, error) {
	if !s.IsLeader() {
		return nil, errors.New("server health is judged by the leader, and this server is not it")
	}
	cfg := s.autopilotConfig()
	future := s.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return nil, fmt.Errorf("read raft configuration: %w", err)
	}
	leaderStats := s.raftStats()
	members := s.serverMembersByID()
	now := time.Now()
	reply := &structs.OperatorHealthReply{Healthy: true, Leader: s.nodeID}
	voters, healthyVoters := 0, 0
	for _, srv := range future.Configuration().Servers {
		id := string(srv.ID)
		isLeader := id == s.nodeID
		var stats structs.RaftStats
		var statsErr error
		if isLeader {
			stats = leaderStats
		} else {
			// A server that does not answer soon is unhealthy; it must not
			// hold up the health of the others.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			statsErr = s.connPool.Call(ctx, string(srv.Address), "Status.RaftStats", &structs.GenericRequest{}, &stats)
			cancel()
		}
		serfStatus := serf.StatusNone
		h := structs.ServerHealth{ID: id, Address: string(srv.Address), Leader: isLeader, Voter: srv.Suffrage == raft.Voter}
		if m, ok := members[id]; ok {
			serfStatus = m.Status
			h.Name = m.Name
			h.Version = m.Tags["build"]
		}
		h.SerfStatus = serfStatus.String()
		h.LastContact, h.LastTerm, h.LastIndex = stats.LastContact, stats.LastTerm, stats.LastIndex
		h.Healthy = judgeServer(cfg, isLeader, serfStatus, stats, statsErr, leaderStats)
		h.StableSince = s.autopilot.observe(id, h.Healthy, now)
		if h.Voter {
			voters++
			reply.Voters = append(reply.Voters, id)
			if h.Healthy {
				healthyVoters++
			}
		}
		if !h.Healthy {
			reply.Healthy = false
		}
		reply.Servers = append(reply.Servers, h)
	}
	reply.FailureTolerance = max(healthyVoters-(voters/2+1), 0)
	return reply, nil
}

// mayRemoveFailedServer says whether the autopilot configuration lets
// the leader drop a failed server from Raft: cleanup is on and the voters
// left are at least MinQuorum.
func (s *Server) mayRemoveFailedServer() bool {
	cfg := s.autopilotConfig()
	if !cfg.CleanupDeadServers {
		return false
	}
	future := s.raft.GetConfiguration()
	if future.Error() != nil {
		return false
	}
	voters := 0
	for _, srv := range future.Configuration().Servers {
		if srv.Suffrage == raft.Voter {
			voters++
		}
	}
	return voters > 0 && uint(voters-1) >= cfg.MinQuorum
}
