package nomad

import (
	"github.com/nomadq/nomadq/structs"
)

// Status is the RPC endpoint for cluster status.
type Status struct {
	srv *Server
}

// Leader returns the leader's RPC address, "" when there is none.
func (s *Status) Leader(args *structs.GenericRequest, reply *string) error {
	if args.Region != "" && args.Region != s.srv.config.Region {
		return s.srv.forwardRegionErr(args.Region)
	}
	*reply = s.srv.Leader()
	return nil
}

// Peers returns the Raft peers' addresses.
func (s *Status) Peers(args *structs.GenericRequest, reply *[]string) error {
	if args.Region != "" && args.Region != s.srv.config.Region {
		return s.srv.forwardRegionErr(args.Region)
	}
	future := s.srv.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return err
	}
	for _, srv := range future.Configuration().Servers {
		*reply = append(*reply, string(srv.Address))
	}
	return nil
}

// Members returns serf's view of the servers, as `nomad server members`
// shows it.
func (s *Status) Members(args *structs.GenericRequest, reply *structs.ServerMembersResponse) error {
	reply.ServerName = s.srv.config.NodeName
	reply.ServerRegion = s.srv.config.Region
	reply.ServerDC = s.srv.config.Datacenter
	for _, m := range s.srv.Members() {
		tags := make(map[string]string, len(m.Tags))
		for k, v := range m.Tags {
			tags[k] = v
		}
		reply.Members = append(reply.Members, &structs.ServerMember{
			Name:        m.Name,
			Addr:        m.Addr.String(),
			Port:        m.Port,
			Tags:        tags,
			Status:      m.Status.String(),
			ProtocolMin: m.ProtocolMin,
			ProtocolMax: m.ProtocolMax,
			ProtocolCur: m.ProtocolCur,
			DelegateMin: m.DelegateMin,
			DelegateMax: m.DelegateMax,
			DelegateCur: m.DelegateCur,
		})
	}
	return nil
}
