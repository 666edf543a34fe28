package command

import (
	"fmt"
	"sort"

	"github.com/hashicorp/nomad/api"
)

const operatorRaftListPeersUsage = `
Usage: nomad operator raft list-peers [options]

  Display the servers of the current Raft configuration. With -stale any
  server answers, for a cluster without a leader.
`

func runOperatorRaftListPeers(args []string, s Streams) int {
	var (
		af    apiFlags
		stale bool
	)
	fs := newFlagSet("operator raft list-peers", s.Stderr, operatorRaftListPeersUsage)
	af.register(fs)
	fs.BoolVar(&stale, "stale", false, "Let any server answer, not only the leader")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	reply, err := client.Operator().RaftGetConfiguration(&api.QueryOptions{AllowStale: stale})
	if err != nil {
		fmt.Fprintf(s.Stderr, "Failed to retrieve raft configuration: %v\n", err)
		return 1
	}
	sort.Slice(reply.Servers, func(i, j int) bool { return reply.Servers[i].Node < reply.Servers[j].Node })
	rows := []string{"Node|ID|Address|State|Voter|RaftProtocol"}
	for _, srv := range reply.Servers {
		state := "follower"
		if srv.Leader {
			state = "leader"
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%v|%s", srv.Node, srv.ID, srv.Address, state, srv.Voter, srv.RaftProtocol))
	}
	fmt.Fprintln(s.Stdout, formatList(rows))
	return 0
}

const operatorRaftRemovePeerUsage = `
Usage: nomad operator raft remove-peer [options]

  Remove a server that failed and will not come back from the Raft
  configuration, by its ID (-peer-id). Removal by address (-peer-address)
  is refused by the servers, as Nomad's refuse it under Raft protocol 3.
`

func runOperatorRaftRemovePeer(args []string, s Streams) int {
	var (
		af              apiFlags
		peerID, address string
	)
	fs := newFlagSet("operator raft remove-peer", s.Stderr, operatorRaftRemovePeerUsage)
	af.register(fs)
	fs.StringVar(&peerID, "peer-id", "", "The ID of the server to remove")
	fs.StringVar(&address, "peer-address", "", "The address of the server to remove (refused under Raft protocol 3)")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	switch {
	case peerID != "" && address != "":
		fmt.Fprintln(s.Stderr, "Only one of -peer-id or -peer-address may be given")
		return 1
	case peerID == "" && address == "":
		fmt.Fprintln(s.Stderr, "Missing peer id required")
		return 1
	}
	var err error
	if address != "" {
		err = client.Operator().RaftRemovePeerByAddress(address, nil)
	} else {
		err = client.Operator().RaftRemovePeerByID(peerID, nil)
	}
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error removing peer: %v\n", err)
		return 1
	}
	if address != "" {
		fmt.Fprintf(s.Stdout, "Removed peer with address %q\n", address)
	} else {
		fmt.Fprintf(s.Stdout, "Removed peer with id %q\n", peerID)
	}
	return 0
}
