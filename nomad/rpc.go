package nomad

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/nomadq/nomadq/structs"
)

// The first byte of every connection to the RPC port says what it carries,
// so RPC and Raft share one port as in Nomad.
const (
	rpcNomad byte = 0x01
	rpcRaft  byte = 0x02
)

// Errors a caller can test for.
var (
	ErrNoLeader     = errors.New("No cluster leader")
	ErrShuttingDown = errors.New("server is shutting down")
)

// listenRPC accepts connections on the RPC listener until it is closed and
// routes each by its first byte.
func (s *Server) listenRPC() {
	for {
		conn, err := s.rpcListener.Accept()
		if err != nil {
			if s.isShutdown() {
				return
			}
			s.logger.Error("failed to accept RPC connection", "error", err)
			continue
		}
		go s.handleConn(conn)
	}
}

func (s *Server) handleConn(conn net.Conn) {
	buf := make([]byte, 1)
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		conn.Close()
		return
	}
	if _, err := io.ReadFull(conn, buf); err != nil {
		if err != io.EOF {
			s.logger.Debug("failed to read first byte of connection", "remote", conn.RemoteAddr(), "error", err)
		}
		conn.Close()
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	switch buf[0] {
	case rpcNomad:
		s.trackConn(conn)
		defer s.untrackConn(conn)
		s.rpcServer.ServeCodec(codec.GoRpc.ServerCodec(conn, structs.MsgpackHandle))
	case rpcRaft:
		s.raftLayer.handoff(conn)
	default:
		s.logger.Warn("unrecognized connection type", "byte", buf[0], "remote", conn.RemoteAddr())
		conn.Close()
	}
}

func (s *Server) trackConn(c net.Conn) {
	s.connsLock.Lock()
	s.conns[c] = struct{}{}
	s.connsLock.Unlock()
}

func (s *Server) untrackConn(c net.Conn) {
	s.connsLock.Lock()
	delete(s.conns, c)
	s.connsLock.Unlock()
}

// RPC calls an endpoint method ("Job.Register") in this process. The
// endpoint forwards to the leader itself when it must.
func (s *Server) RPC(method string, args, reply any) error {
	c := &inmemCodec{method: method, args: args, reply: reply}
	if err := s.rpcServer.ServeRequest(c); err != nil {
		return err
	}
	return c.err
}

// rpcInfo is what forwarding needs to know about a request.
type rpcInfo interface {
	RequestRegion() string
	IsRead() bool
	AllowStaleRead() bool
}

// forward sends the request to the leader when this server must not answer
// it itself: every write, and every read that is not stale. It returns
// true when it handled the request (err is then the endpoint's result).
func (s *Server) forward(method string, info rpcInfo, args, reply any) (bool, error) {
	if region := info.RequestRegion(); region != "" && region != s.config.Region {
		return true, fmt.Errorf("No path to region %q", region)
	}
	if info.IsRead() && info.AllowStaleRead() {
		return false, nil
	}
	leader, err := s.waitForLeader()
	if err != nil {
		return true, err
	}
	if leader == "" {
		return false, nil // this server is the leader
	}
	return true, s.connPool.call(leader, method, args, reply)
}

// waitForLeader returns the leader's RPC address, or "" when this server is
// the leader. It waits up to RPCHoldTimeout for an election to finish.
func (s *Server) waitForLeader() (string, error) {
	deadline := time.Now().Add(s.config.RPCHoldTimeout)
	for {
		if s.IsLeader() {
			return "", nil
		}
		if addr, _ := s.raft.LeaderWithID(); addr != "" {
			return string(addr), nil
		}
		if time.Now().After(deadline) {
			return "", ErrNoLeader
		}
		select {
		case <-s.shutdownCh:
			return "", ErrShuttingDown
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// connPool keeps one multiplexed RPC connection per remote server.
type connPool struct {
	mu      sync.Mutex
	clients map[string]*rpc.Client
	timeout time.Duration
}

func newConnPool(timeout time.Duration) *connPool {
	return &connPool{clients: make(map[string]*rpc.Client), timeout: timeout}
}

func (p *connPool) get(addr string) (*rpc.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[addr]; ok {
		return c, nil
	}
	conn, err := net.DialTimeout("tcp", addr, p.timeout)
	if err != nil {
		return nil, fmt.Errorf("dial server %s: %w", addr, err)
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetKeepAlive(true)
		_ = tcp.SetNoDelay(true)
	}
	if _, err := conn.Write([]byte{rpcNomad}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("dial server %s: %w", addr, err)
	}
	c := rpc.NewClientWithCodec(codec.GoRpc.ClientCodec(&bufferedConn{Conn: conn, r: bufio.NewReader(conn)}, structs.MsgpackHandle))
	p.clients[addr] = c
	return c, nil
}

// call makes an RPC to addr, dropping the cached connection when it broke
// so the next call dials again.
func (p *connPool) call(addr, method string, args, reply any) error {
	c, err := p.get(addr)
	if err != nil {
		return err
	}
	err = c.Call(method, args, reply)
	if err != nil && isConnError(err) {
		p.mu.Lock()
		if p.clients[addr] == c {
			delete(p.clients, addr)
		}
		p.mu.Unlock()
		c.Close()
	}
	return err
}

func (p *connPool) shutdown() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, c := range p.clients {
		c.Close()
		delete(p.clients, addr)
	}
}

func isConnError(err error) bool {
	return errors.Is(err, rpc.ErrShutdown) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe")
}

// bufferedConn reads through a buffer; net/rpc codecs read in small pieces.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// RPCClient dials a server's RPC port for callers outside the server
// process, such as a client agent.
type RPCClient struct {
	pool *connPool
	addr string
}

// NewRPCClient returns a client of the server at addr ("host:port").
func NewRPCClient(addr string, timeout time.Duration) *RPCClient {
	return &RPCClient{pool: newConnPool(timeout), addr: addr}
}

// Call makes one RPC.
func (c *RPCClient) Call(ctx context.Context, method string, args, reply any) error {
	done := make(chan error, 1)
	go func() { done <- c.pool.call(c.addr, method, args, reply) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes the connection.
func (c *RPCClient) Close() { c.pool.shutdown() }

func (s *Server) forwardRegionErr(region string) error {
	return fmt.Errorf("No path to region %q", region)
}
