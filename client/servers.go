package client

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
)

// defaultServerPort is the RPC port assumed for a server address given
// without one, as Nomad assumes it.
const defaultServerPort = 4647

// ErrInProcessServers is SetServers' answer on a client that reaches its
// own agent's server in process and keeps no server list.
var ErrInProcessServers = errors.New("this client reaches the server of its own agent in process and keeps no server list to set")

// Servers returns the server RPC addresses the client knows, sorted.
func (c *Client) Servers() []string {
	var out []string
	if c.servers == nil {
		out = slices.Clone(c.cfg.Servers)
	} else {
		c.servers.mu.Lock()
		out = slices.Clone(c.servers.addrs)
		c.servers.mu.Unlock()
	}
	slices.Sort(out)
	return out
}

// SetServers replaces the client's server list. Every address must be an
// IP or host name with an optional port (4647 by default); nothing is
// changed when one is not.
func (c *Client) SetServers(addrs []string) error {
	if c.servers == nil {
		return ErrInProcessServers
	}
	if len(addrs) == 0 {
		return errors.New("missing server address")
	}
	norm := make([]string, 0, len(addrs))
	for _, a := range addrs {
		n, err := normalizeServerAddr(a)
		if err != nil {
			return err
		}
		if !slices.Contains(norm, n) {
			norm = append(norm, n)
		}
	}
	s := c.servers
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addrs = norm
	s.cur = 0
	return nil
}

func normalizeServerAddr(a string) (string, error) {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		host, port = a, strconv.Itoa(defaultServerPort)
	}
	if host == "" {
		return "", fmt.Errorf("server address %q has no host", a)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("server address %q has an invalid port %q: must be 1 to 65535", a, port)
	}
	if _, err := net.LookupHost(host); err != nil {
		return "", fmt.Errorf("server address %q: cannot resolve %q: %v", a, host, err)
	}
	return net.JoinHostPort(host, port), nil
}

// RPC calls a server endpoint through the client's connection to the
// servers, for the HTTP API of an agent that runs no server itself.
func (c *Client) RPC(method string, args, reply any) error {
	return c.rpc.Call(c.ctx, method, args, reply)
}
