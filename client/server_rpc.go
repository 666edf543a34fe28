package client

import "time"

// ServerRPC is an RPC over the servers at a list of addresses, as a
// client-only agent's client uses: calls go to one server and move on to
// the next after a transport failure, and servers a reply names are
// learned. Other node agents in the process (the node simulator) use it
// to share one connection pool.
type ServerRPC struct {
	*serverList
}

// NewServerRPC returns an RPC over the servers at addrs ("host:port")
// whose dials give up after timeout. Close releases its connections.
func NewServerRPC(addrs []string, timeout time.Duration) *ServerRPC {
	return &ServerRPC{serverList: newServerList(addrs, timeout)}
}

// Learn adds servers a server's reply named.
func (s *ServerRPC) Learn(addrs []string) { s.learn(addrs) }

// Close closes the pool's connections; later calls fail.
func (s *ServerRPC) Close() { s.close() }
