package nomad

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/hashicorp/go-connlimit"
	"github.com/hashicorp/yamux"

	"github.com/nomadq/nomadq/msgpackrpc"
	"github.com/nomadq/nomadq/structs"
)

// Errors a caller can test for.
var (
	ErrNoLeader     = errors.New("No cluster leader")
	ErrShuttingDown = errors.New("server is shutting down")
)

// listenRPC accepts connections on the RPC listener until it is closed and
// routes each by its first byte. An address that already holds
// RPCMaxConnsPerClient connections has the next one closed at once.
func (s *Server) listenRPC() {
	limiter := connlimit.NewLimiter(connlimit.Config{MaxConnsPerClientIP: s.config.RPCMaxConnsPerClient})
	// One warning a second at most: a client over its cap tends to
	// keep dialing.
	var lastWarn time.Time
	for {
		conn, err := s.rpcListener.Accept()
		if err != nil {
			if s.isShutdown() {
				return
			}
			s.logger.Error("failed to accept RPC connection", "error", err)
			continue
		}
		free, err := limiter.Accept(conn)
		if err != nil {
			if now := time.Now(); now.Sub(lastWarn) >= time.Second {
				lastWarn = now
				s.logger.Warn("rejecting RPC connection: too many connections from this address",
					"remote", conn.RemoteAddr(), "limit", s.config.RPCMaxConnsPerClient, "key", "limits.rpc_max_conns_per_client")
			}
			conn.Close()
			continue
		}
		go func() {
			defer free()
			s.handleConn(conn)
		}()
	}
}

func (s *Server) handleConn(conn net.Conn) {
	kind, ok := s.readConnKind(conn)
	if !ok {
		return
	}
	var peer *tls.ConnectionState
	switch set := s.config.TLS; {
	case kind == msgpackrpc.ConnTLS && set == nil:
		s.logger.Warn("TLS connection attempted, server not configured for TLS", "remote", conn.RemoteAddr())
		conn.Close()
		return
	case kind == msgpackrpc.ConnTLS:
		tc := tls.Server(conn, set.IncomingRPC())
		// Someone without a certificate must not hold a connection
		// open by never finishing the handshake.
		if d := s.config.RPCHandshakeTimeout; d > 0 {
			_ = tc.SetDeadline(time.Now().Add(d))
		}
		if err := tc.Handshake(); err != nil {
			s.logger.Warn("failed TLS handshake", "remote", conn.RemoteAddr(), "error", err)
			conn.Close()
			return
		}
		_ = tc.SetDeadline(time.Time{})
		conn = tc
		if kind, ok = s.readConnKind(conn); !ok {
			return
		}
		if kind == msgpackrpc.ConnTLS {
			s.logger.Warn("TLS connection attempting to establish inner TLS connection", "remote", conn.RemoteAddr())
			conn.Close()
			return
		}
		cs := tc.ConnectionState()
		peer = &cs
	case set != nil && !set.Config().RPCUpgradeMode:
		s.logger.Warn("non-TLS connection attempted with tls.rpc set", "remote", conn.RemoteAddr())
		conn.Close()
		return
	}
	switch kind {
	case msgpackrpc.ConnRPC:
		s.trackConn(conn)
		defer s.untrackConn(conn)
		s.rpcServer.ServeCodec(&authCodec{ServerCodec: msgpackrpc.NewServerCodec(conn), srv: s})
	case msgpackrpc.ConnMultiplexV2:
		s.trackConn(conn)
		defer s.untrackConn(conn)
		s.serveMultiplex(conn)
	case msgpackrpc.ConnRaft:
		if set := s.config.TLS; set != nil && !set.Config().RPCUpgradeMode {
			if err := set.CheckRaftPeer(*peer); err != nil {
				s.logger.Warn("unauthorized raft connection", "remote", conn.RemoteAddr(), "error", err)
				conn.Close()
				return
			}
		}
		s.raftLayer.handoff(conn)
	default:
		s.logger.Warn("unrecognized connection type", "byte", kind, "remote", conn.RemoteAddr())
		conn.Close()
	}
}

// serveMultiplex serves the yamux streams of a multiplexed connection
// until it closes; each stream opens with a byte of its own. Closing
// conn (Shutdown does) ends the session and every stream on it.
func (s *Server) serveMultiplex(conn net.Conn) {
	sess, err := yamux.Server(conn, msgpackrpc.MuxConfig())
	if err != nil {
		s.logger.Warn("failed to start multiplexed connection", "remote", conn.RemoteAddr(), "error", err)
		conn.Close()
		return
	}
	defer sess.Close()
	for {
		stream, err := sess.AcceptStream()
		if err != nil {
			if !sess.IsClosed() {
				s.logger.Debug("multiplexed connection ended", "remote", conn.RemoteAddr(), "error", err)
			}
			return
		}
		go s.serveStream(stream)
	}
}

// serveStream serves one stream of a multiplexed connection. Only RPC
// travels on streams: Raft keeps connections of its own.
func (s *Server) serveStream(stream *yamux.Stream) {
	kind, ok := s.readConnKind(stream)
	if !ok {
		return
	}
	if kind != msgpackrpc.ConnRPC {
		s.logger.Warn("unrecognized stream type on multiplexed connection", "byte", kind, "remote", stream.RemoteAddr())
		stream.Close()
		return
	}
	s.rpcServer.ServeCodec(&authCodec{ServerCodec: msgpackrpc.NewServerCodec(stream), srv: s})
}

// readConnKind reads the byte that opens a connection (or, inside TLS,
// the TLS stream) and says what it carries; it closes conn when the
// byte does not come.
func (s *Server) readConnKind(conn net.Conn) (byte, bool) {
	buf := make([]byte, 1)
	if d := s.config.RPCHandshakeTimeout; d > 0 {
		if err := conn.SetReadDeadline(time.Now().Add(d)); err != nil {
			conn.Close()
			return 0, false
		}
	}
	if _, err := io.ReadFull(conn, buf); err != nil {
		if err != io.EOF {
			s.logger.Debug("failed to read first byte of connection", "remote", conn.RemoteAddr(), "error", err)
		}
		conn.Close()
		return 0, false
	}
	_ = conn.SetReadDeadline(time.Time{})
	return buf[0], true
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
	if err := s.rpcServer.ServeRequest(&authCodec{ServerCodec: c, srv: s}); err != nil {
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
//
// When this server answers, forward authorizes the call first: the
// receiving server of a forwarded call does not (see forwardedRPCs).
func (s *Server) forward(method string, info rpcInfo, args, reply any) (bool, error) {
	if region := info.RequestRegion(); region != "" && region != s.config.Region {
		return true, noRegionPath(region)
	}
	if info.IsRead() && info.AllowStaleRead() {
		return s.authorizeHere(method, args)
	}
	leader, err := s.waitForLeader()
	if err != nil {
		return true, err
	}
	if leader == "" {
		return s.authorizeHere(method, args) // this server is the leader
	}
	// Endpoints have no context to pass on; Shutdown closes the pool's
	// connections, which ends a forwarded call.
	return true, s.connPool.Call(context.Background(), leader, method, args, reply)
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
			return "", s.noLeaderErr()
		}
		select {
		case <-s.shutdownCh:
			return "", ErrShuttingDown
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// authorizeHere checks a call this server is about to answer: false and
// nil to go on, true and the refusal otherwise.
func (s *Server) authorizeHere(method string, args any) (bool, error) {
	if err := s.authorizeRPC(method, args); err != nil {
		return true, err
	}
	return false, nil
}

func (s *Server) forwardRegionErr(region string) error { return noRegionPath(region) }

// noRegionPath refuses a request for a region this server cannot reach;
// a 400 as it names the region the caller asked for.
func noRegionPath(region string) error {
	return structs.NewErrRPCCodedf(http.StatusBadRequest, "No path to region %q", region)
}
