package nomad

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"
)

// serverParts is what a serf member's tags say about a server.
type serverParts struct {
	Name       string
	ID         string
	Region     string
	Datacenter string
	Expect     int
	RPCAddr    *net.TCPAddr
	Status     serf.MemberStatus
}

// isNomadServer parses a serf member into serverParts, and false when the
// member is not a nomadq server.
func isNomadServer(m serf.Member) (*serverParts, bool) {
	if m.Tags["role"] != "nomad" {
		return nil, false
	}
	port, err := strconv.Atoi(m.Tags["port"])
	if err != nil {
		return nil, false
	}
	expect, _ := strconv.Atoi(m.Tags["expect"])
	addr := m.Addr
	if rpcAddr := m.Tags["rpc_addr"]; rpcAddr != "" {
		addr = net.ParseIP(rpcAddr)
	}
	return &serverParts{
		Name:       m.Name,
		ID:         m.Tags["id"],
		Region:     m.Tags["region"],
		Datacenter: m.Tags["dc"],
		Expect:     expect,
		RPCAddr:    &net.TCPAddr{IP: addr, Port: port},
		Status:     m.Status,
	}, true
}

func (s *Server) setupSerf() error {
	conf := serf.DefaultConfig()
	conf.Init()
	conf.NodeName = fmt.Sprintf("%s.%s", s.config.NodeName, s.config.Region)
	rpcAddr := s.rpcAdvertise.(*net.TCPAddr)
	conf.Tags = map[string]string{
		"role":     "nomad",
		"region":   s.config.Region,
		"dc":       s.config.Datacenter,
		"id":       s.nodeID,
		"port":     strconv.Itoa(rpcAddr.Port),
		"rpc_addr": rpcAddr.IP.String(),
		"build":    "0.1.0",
		"vsn":      "1",
		"raft_vsn": "3",
	}
	if s.config.BootstrapExpect > 1 {
		conf.Tags["expect"] = strconv.Itoa(s.config.BootstrapExpect)
	} else if s.config.BootstrapExpect == 1 {
		conf.Tags["bootstrap"] = "1"
	}
	conf.EventCh = s.eventCh
	stdOpts := &hclog.StandardLoggerOptions{InferLevels: true}
	conf.Logger = s.logger.Named("serf").StandardLogger(stdOpts)
	conf.MemberlistConfig = memberlist.DefaultLANConfig()
	conf.MemberlistConfig.Name = conf.NodeName
	conf.MemberlistConfig.BindAddr = s.config.SerfBindAddr
	conf.MemberlistConfig.BindPort = s.config.SerfPort
	conf.MemberlistConfig.Logger = s.logger.Named("memberlist").StandardLogger(stdOpts)
	if s.config.SerfAdvertiseAddr != "" {
		conf.MemberlistConfig.AdvertiseAddr = s.config.SerfAdvertiseAddr
		conf.MemberlistConfig.AdvertisePort = s.config.SerfPort
	}
	if s.config.DevMode || len(s.config.RetryJoin) > 0 {
		// Loopback clusters converge faster with shorter probes.
		conf.MemberlistConfig.ProbeInterval = 500 * time.Millisecond
		conf.MemberlistConfig.ProbeTimeout = 250 * time.Millisecond
		conf.MemberlistConfig.GossipInterval = 100 * time.Millisecond
		conf.MemberlistConfig.SuspicionMult = 2
	}
	if err := s.setupKeyring(conf); err != nil {
		return err
	}
	conf.ReapInterval = 30 * time.Second
	conf.ReconnectTimeout = 24 * time.Hour
	sf, err := serf.Create(conf)
	if err != nil {
		return fmt.Errorf("server: start serf: %w", err)
	}
	s.serf = sf
	return nil
}

// Join joins the serf cluster through the given "host:port" addresses and
// returns how many were reached.
func (s *Server) Join(addrs []string) (int, error) {
	return s.serf.Join(addrs, true)
}

func (s *Server) retryJoin() {
	attempt := 0
	for {
		n, err := s.Join(s.config.RetryJoin)
		if err == nil && n > 0 {
			s.logger.Info("joined servers", "count", n)
			return
		}
		attempt++
		if s.config.RetryMax > 0 && attempt >= s.config.RetryMax {
			s.logger.Error("giving up joining servers", "attempts", attempt, "error", err)
			return
		}
		s.logger.Warn("join failed, retrying", "error", err, "interval", s.config.RetryInterval)
		select {
		case <-time.After(s.config.RetryInterval):
		case <-s.shutdownCh:
			return
		}
	}
}

// serfEventHandler bootstraps the cluster once enough servers joined and,
// on the leader, turns membership changes into Raft peer changes.
func (s *Server) serfEventHandler() {
	for {
		select {
		case e := <-s.eventCh:
			me, ok := e.(serf.MemberEvent)
			if !ok {
				continue
			}
			if me.EventType() == serf.EventMemberJoin {
				s.maybeBootstrap()
			}
			if s.IsLeader() {
				for _, m := range me.Members {
					s.reconcileMember(m)
				}
			}
		case <-s.shutdownCh:
			return
		}
	}
}

// maybeBootstrap forms the first Raft configuration once BootstrapExpect
// servers of this region are members and none has Raft state yet. Every
// server computes the same configuration, so they agree.
func (s *Server) maybeBootstrap() {
	if s.config.BootstrapExpect <= 1 {
		return
	}
	if idx := s.raft.LastIndex(); idx != 0 {
		return
	}
	var servers []raft.Server
	for _, m := range s.serf.Members() {
		p, ok := isNomadServer(m)
		if !ok || p.Region != s.config.Region || m.Status != serf.StatusAlive {
			continue
		}
		if p.Expect != 0 && p.Expect != s.config.BootstrapExpect {
			s.logger.Error("peer has a different bootstrap_expect", "peer", m.Name, "expect", p.Expect)
			return
		}
		servers = append(servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.RPCAddr.String())})
	}
	if len(servers) < s.config.BootstrapExpect {
		return
	}
	if err := s.raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil && err != raft.ErrCantBootstrap {
		s.logger.Error("bootstrap failed", "error", err)
		return
	}
	s.logger.Info("bootstrapped cluster", "servers", len(servers))
}

// reconcileMember makes Raft's peer set follow serf: alive servers become
// voters, failed or departed ones are removed.
func (s *Server) reconcileMember(m serf.Member) {
	p, ok := isNomadServer(m)
	if !ok || p.Region != s.config.Region {
		return
	}
	if p.ID == s.nodeID {
		return
	}
	switch m.Status {
	case serf.StatusAlive:
		future := s.raft.GetConfiguration()
		if err := future.Error(); err != nil {
			s.logger.Warn("read raft configuration", "error", err)
			return
		}
		for _, srv := range future.Configuration().Servers {
			if srv.ID == raft.ServerID(p.ID) && srv.Address == raft.ServerAddress(p.RPCAddr.String()) {
				return
			}
		}
		if err := s.raft.AddVoter(raft.ServerID(p.ID), raft.ServerAddress(p.RPCAddr.String()), 0, 0).Error(); err != nil {
			s.logger.Warn("add raft peer", "peer", m.Name, "error", err)
		}
	case serf.StatusLeft, serf.StatusFailed:
		if m.Status == serf.StatusFailed && !s.mayRemoveFailedServer() {
			// Autopilot's cleanup_dead_servers is off, or removing it
			// would go below min_quorum: the operator decides.
			s.logger.Warn("failed server stays in the raft configuration (autopilot)", "peer", m.Name)
			return
		}
		if err := s.raft.RemoveServer(raft.ServerID(p.ID), 0, 0).Error(); err != nil {
			s.logger.Warn("remove raft peer", "peer", m.Name, "error", err)
		}
	}
}

// reconcileMembers runs reconcileMember over every member; the new leader
// calls it once.
func (s *Server) reconcileMembers() {
	for _, m := range s.serf.Members() {
		s.reconcileMember(m)
	}
}

// Members returns serf's view of the servers.
func (s *Server) Members() []serf.Member { return s.serf.Members() }
