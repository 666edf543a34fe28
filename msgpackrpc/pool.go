package msgpackrpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/rpc"
	"sync"
	"time"

	"github.com/hashicorp/yamux"
)

// maxIdlePerServer bounds the streams kept open to one server between
// calls; a burst of calls beyond it opens and closes the extra ones.
const maxIdlePerServer = 4

// errPoolShutdown is what calls get once the pool was shut down. Its text
// reads as a transport failure to the client's server list.
var errPoolShutdown = errors.New("rpc pool is shut down")

// Pool makes RPCs to servers over one connection per server, multiplexed
// with yamux as Nomad's pool does. A call has a stream of that connection
// to itself while it runs: cancelling it closes that stream without
// disturbing other calls, and a finished call hands the stream back for
// the next one. The zero Pool is not usable; use
// NewPool.
type Pool struct {
	timeout time.Duration
	// dial opens a connection to addr; tests replace it.
	dial func(ctx context.Context, addr string) (net.Conn, error)
	// tls, when set, makes every connection TLS (see Announce).
	tls *tls.Config

	mu       sync.Mutex
	sessions map[string]*muxSession
	idle     map[string][]*rpc.Client
	busy     map[*rpc.Client]struct{}
	shutdown bool
}

// muxSession is the one connection the pool keeps to a server, with the
// streams of every call to it multiplexed over it. ready is closed once
// the dial ended, with sess or err set.
type muxSession struct {
	ready chan struct{}
	sess  *yamux.Session
	err   error
}

// NewPool returns a pool whose dials give up after timeout.
func NewPool(timeout time.Duration) *Pool {
	p := &Pool{
		timeout:  timeout,
		sessions: make(map[string]*muxSession),
		idle:     make(map[string][]*rpc.Client),
		busy:     make(map[*rpc.Client]struct{}),
	}
	p.dial = p.dialTCP
	return p
}

// UseTLS makes the pool's connections TLS with cfg, as servers with
// tls.rpc require. Call it before the first call.
func (p *Pool) UseTLS(cfg *tls.Config) { p.tls = cfg }

// dialTCP dials with Go's TCP defaults, which already turn on keep-alive
// and turn off Nagle's algorithm.
func (p *Pool) dialTCP(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: p.timeout}
	return d.DialContext(ctx, "tcp", addr)
}

// Call calls method on the server at addr ("host:port"). When ctx ends
// before the answer, Call closes the call's connection and returns ctx's
// error only once net/rpc has let go of reply: nothing is written into
// reply after Call returned.
func (p *Pool) Call(ctx context.Context, addr, method string, args, reply any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for {
		c, reused, err := p.acquire(ctx, addr)
		if err != nil {
			return err
		}
		call := c.Go(method, args, reply, make(chan *rpc.Call, 1))
		select {
		case <-call.Done:
		case <-ctx.Done():
			p.discard(c)
			// Closing ends the read of the answer; Done then fires
			// whatever stage the call was in.
			<-call.Done
			if call.Error == nil {
				return nil // the answer was complete after all
			}
			return ctx.Err()
		}
		// An idle connection the server has since closed fails the call
		// with ErrShutdown before sending anything, so another
		// connection may carry it.
		if reused && idleStreamGone(call.Error) {
			p.discard(c)
			continue
		}
		return p.release(addr, c, call.Error)
	}
}

// idleStreamGone reports whether err is how a call fails on an idle
// stream that closed, or whose connection closed, before the call was
// sent: net/rpc's client already saw the stream end, or yamux refuses
// the write.
func idleStreamGone(err error) bool {
	if errors.Is(err, rpc.ErrShutdown) || errors.Is(err, yamux.ErrSessionShutdown) || errors.Is(err, yamux.ErrStreamClosed) {
		return true
	}
	// The codec may hand the write error on as text.
	msg := fmt.Sprint(err)
	return msg == yamux.ErrSessionShutdown.Error() || msg == yamux.ErrStreamClosed.Error()
}

// acquire takes an idle connection to addr or dials a new one. It dials
// without holding the lock, so a slow server holds up only its own
// callers.
func (p *Pool) acquire(ctx context.Context, addr string) (c *rpc.Client, reused bool, err error) {
	p.mu.Lock()
	if p.shutdown {
		p.mu.Unlock()
		return nil, false, errPoolShutdown
	}
	var stale []*rpc.Client
	if ms := p.sessions[addr]; ms != nil && ms.dialed() && ms.sess != nil && ms.sess.IsClosed() {
		// The connection died while idle: its streams are gone with it.
		stale = p.forgetLocked(addr)
	}
	if idle := p.idle[addr]; len(idle) > 0 {
		c = idle[len(idle)-1]
		p.idle[addr] = idle[:len(idle)-1]
		p.busy[c] = struct{}{}
		p.mu.Unlock()
		return c, true, nil
	}
	p.mu.Unlock()
	for _, sc := range stale {
		sc.Close()
	}

	c, err = p.open(ctx, addr)
	if err != nil {
		return nil, false, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shutdown {
		c.Close()
		return nil, false, errPoolShutdown
	}
	p.busy[c] = struct{}{}
	return c, false, nil
}

// open opens a stream for one RPC client on the connection to addr,
// dialing it first when there is none or it has closed, and announces
// RPC on the stream.
func (p *Pool) open(ctx context.Context, addr string) (*rpc.Client, error) {
	for attempt := 0; ; attempt++ {
		sess, err := p.session(ctx, addr)
		if err != nil {
			return nil, err
		}
		stream, err := sess.OpenStream()
		if err != nil {
			p.dropSession(addr, sess)
			// A connection that died since it was last used is
			// replaced once; a fresh one that fails says why.
			if attempt == 0 {
				continue
			}
			return nil, fmt.Errorf("dial server %s: open stream: %w", addr, err)
		}
		conn := &streamConn{Stream: stream}
		if _, err := conn.Write([]byte{ConnRPC}); err != nil {
			conn.Close()
			return nil, fmt.Errorf("dial server %s: %w", addr, err)
		}
		return rpc.NewClientWithCodec(newClientCodec(conn)), nil
	}
}

// session returns the multiplexed connection to addr, dialing it when
// there is none. One caller dials, outside the lock; the others to the
// same server wait for it (or for their ctx).
func (p *Pool) session(ctx context.Context, addr string) (*yamux.Session, error) {
	p.mu.Lock()
	if p.shutdown {
		p.mu.Unlock()
		return nil, errPoolShutdown
	}
	ms := p.sessions[addr]
	if ms != nil {
		p.mu.Unlock()
		select {
		case <-ms.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if ms.err != nil {
			return nil, ms.err
		}
		if !ms.sess.IsClosed() {
			return ms.sess, nil
		}
		p.dropSession(addr, ms.sess)
		return p.session(ctx, addr)
	}
	ms = &muxSession{ready: make(chan struct{})}
	p.sessions[addr] = ms
	p.mu.Unlock()

	ms.sess, ms.err = p.dialSession(ctx, addr)
	p.mu.Lock()
	if ms.err == nil && p.shutdown {
		ms.sess.Close()
		ms.sess, ms.err = nil, errPoolShutdown
	}
	if ms.err != nil && p.sessions[addr] == ms {
		delete(p.sessions, addr)
	}
	p.mu.Unlock()
	close(ms.ready)
	return ms.sess, ms.err
}

// dialed reports whether the dial ended, so that sess and err are set.
func (ms *muxSession) dialed() bool {
	select {
	case <-ms.ready:
		return true
	default:
		return false
	}
}

// dialSession dials addr and announces a multiplexed connection.
func (p *Pool) dialSession(ctx context.Context, addr string) (*yamux.Session, error) {
	conn, err := p.dial(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("dial server %s: %w", addr, err)
	}
	conn, err = Announce(ctx, conn, ConnMultiplexV2, p.tls)
	if err != nil {
		return nil, fmt.Errorf("dial server %s: %w", addr, err)
	}
	sess, err := yamux.Client(conn, MuxConfig())
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("dial server %s: %w", addr, err)
	}
	return sess, nil
}

// dropSession forgets sess as the connection to addr and closes it.
func (p *Pool) dropSession(addr string, sess *yamux.Session) {
	var stale []*rpc.Client
	p.mu.Lock()
	if ms := p.sessions[addr]; ms != nil && ms.sess == sess {
		stale = p.forgetLocked(addr)
	}
	p.mu.Unlock()
	sess.Close()
	for _, c := range stale {
		c.Close()
	}
}

// forgetLocked forgets the connection to addr and returns its idle
// streams for the caller to close. p.mu is held; the session's ready
// channel is closed.
func (p *Pool) forgetLocked(addr string) []*rpc.Client {
	delete(p.sessions, addr)
	stale := p.idle[addr]
	delete(p.idle, addr)
	return stale
}

// release hands c back after a call that ended with err, and returns the
// error for the caller. Only a connection that delivered an answer (a
// result or the server's error) is known to be in step and kept; any
// other failure may have left half a message on it.
func (p *Pool) release(addr string, c *rpc.Client, err error) error {
	var serverErr rpc.ServerError
	healthy := err == nil || errors.As(err, &serverErr)
	p.mu.Lock()
	delete(p.busy, c)
	shutdown := p.shutdown
	keep := healthy && !shutdown && len(p.idle[addr]) < maxIdlePerServer
	if keep {
		p.idle[addr] = append(p.idle[addr], c)
	}
	p.mu.Unlock()
	if !keep {
		c.Close()
	}
	if !healthy && shutdown {
		// Shutdown closed the connection under the call; say so rather
		// than how the read of the answer broke.
		return errPoolShutdown
	}
	return err
}

// discard closes c, which is in use, for good.
func (p *Pool) discard(c *rpc.Client) {
	p.mu.Lock()
	delete(p.busy, c)
	p.mu.Unlock()
	c.Close()
}

// Shutdown closes every connection, failing the calls in flight, and
// makes later calls fail. It is safe to call more than once.
func (p *Pool) Shutdown() {
	p.mu.Lock()
	p.shutdown = true
	var all []*rpc.Client
	for addr, idle := range p.idle {
		all = append(all, idle...)
		delete(p.idle, addr)
	}
	for c := range p.busy {
		all = append(all, c)
		delete(p.busy, c)
	}
	var sessions []*yamux.Session
	for addr, ms := range p.sessions {
		// A dial in progress sees the shutdown and closes its session.
		if ms.dialed() && ms.sess != nil {
			sessions = append(sessions, ms.sess)
		}
		delete(p.sessions, addr)
	}
	p.mu.Unlock()
	for _, c := range all {
		c.Close()
	}
	for _, sess := range sessions {
		sess.Close()
	}
}
