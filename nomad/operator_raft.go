package nomad

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"

	"github.com/nomadq/nomadq/structs"
)

// RaftGetConfiguration lists the servers of the Raft configuration, as
// the leader sees it.
func (o *Operator) RaftGetConfiguration(args *structs.GenericRequest, reply *structs.RaftConfigurationResponse) error {
	if done, err := o.srv.forward("Operator.RaftGetConfiguration", args.QueryOptions, args, reply); done {
		return err
	}
	future := o.srv.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return fmt.Errorf("read raft configuration: %w", err)
	}
	members := o.srv.serverMembersByID()
	leader := o.srv.Leader()
	for _, srv := range future.Configuration().Servers {
		rs := &structs.RaftServer{
			ID:      string(srv.ID),
			Address: string(srv.Address),
			Leader:  string(srv.Address) == leader,
			Voter:   srv.Suffrage == raft.Voter,
		}
		if m, ok := members[string(srv.ID)]; ok {
			rs.Node = m.Name
			rs.RaftProtocol = m.Tags["raft_vsn"]
		}
		reply.Servers = append(reply.Servers, rs)
	}
	reply.Index = future.Index()
	return nil
}

// RaftRemovePeerByID removes a server from the Raft configuration, for
// one that died and will not come back.
func (o *Operator) RaftRemovePeerByID(args *structs.RaftPeerByIDRequest, reply *struct{}) error {
	if done, err := o.srv.forward("Operator.RaftRemovePeerByID", args.WriteRequest, args, reply); done {
		return err
	}
	future := o.srv.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return fmt.Errorf("read raft configuration: %w", err)
	}
	found := false
	for _, srv := range future.Configuration().Servers {
		if string(srv.ID) == args.ID {
			found = true
			break
		}
	}
	if !found {
		return structs.NewErrNotFoundf("id %q was not found in the Raft configuration", args.ID)
	}
	if err := o.srv.raft.RemoveServer(raft.ServerID(args.ID), 0, 0).Error(); err != nil {
		return fmt.Errorf("remove raft peer %q: %w", args.ID, err)
	}
	o.srv.logger.Warn("removed raft peer", "id", args.ID)
	return nil
}

// RaftStats reports this server's own Raft log position and how long ago
// it heard from the leader; the leader asks every server for it to judge
// their health.
func (s *Status) RaftStats(args *structs.GenericRequest, reply *structs.RaftStats) error {
	*reply = s.srv.raftStats()
	return nil
}

func (s *Server) raftStats() structs.RaftStats {
	stats := s.raft.Stats()
	term, _ := strconv.ParseUint(stats["last_log_term"], 10, 64)
	out := structs.RaftStats{LastTerm: term, LastIndex: s.raft.LastIndex()}
	if !s.IsLeader() {
		if last := s.raft.LastContact(); !last.IsZero() {
			out.LastContact = max(time.Since(last), 1)
		} else {
			// Never heard from a leader: as far as it could be.
			out.LastContact = -1
		}
	}
	return out
}

// serverMembersByID returns the serf members that are nomadq servers of
// this region, by server ID.
func (s *Server) serverMembersByID() map[string]serf.Member {
	out := make(map[string]serf.Member)
	for _, m := range s.serf.Members() {
		if p, ok := isNomadServer(m); ok && p.Region == s.config.Region {
			out[p.ID] = m
		}
	}
	return out
}

// Regions lists the regions of every server serf knows, sorted.
func (s *Server) Regions() []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range s.serf.Members() {
		if p, ok := isNomadServer(m); ok && !seen[p.Region] {
			seen[p.Region] = true
			out = append(out, p.Region)
		}
	}
	slices.Sort(out)
	return out
}

// RemoveFailedNode marks a serf member as left (force-leave); with prune
// it also drops the member from the list at once.
func (s *Server) RemoveFailedNode(name string, prune bool) error {
	if prune {
		return s.serf.RemoveFailedNodePrune(name)
	}
	return s.serf.RemoveFailedNode(name)
}

// Region is the RPC endpoint for the regions of the federation.
type Region struct {
	srv *Server
}

// List returns the known regions.
func (r *Region) List(args *structs.GenericRequest, reply *[]string) error {
	*reply = r.srv.Regions()
	return nil
}
