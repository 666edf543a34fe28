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
)

// maxIdlePerServer bounds the connections kept open to one server between
// calls; a burst of calls beyond it dials and closes the extra ones.
const maxIdlePerServer = 4

// errPoolShutdown is what calls get once the pool was shut down. Its text
// reads as a transport failure to the client's server list.
var errPoolShutdown = errors.New("rpc pool is shut down")

// Pool makes RPCs to servers over connections it keeps. A call has its
// connection to itself while it runs: cancelling it closes that
// connection without disturbing other calls, and a finished call hands
// the connection back for the next one. The zero Pool is not usable; use
// NewPool.
type Pool struct {
	timeout time.Duration
	// dial opens a connection to addr; tests replace it.
	dial func(ctx context.Context, addr string) (net.Conn, error)
	// tls, when set, makes every connection TLS (see Announce).
	tls *tls.Config

	mu       sync.Mutex
	idle     map[string][]*rpc.Client
	busy     map[*rpc.Client]struct{}
	shutdown bool
}

// NewPool returns a pool whose dials give up after timeout.
func NewPool(timeout time.Duration) *Pool {
	p := &Pool{
		timeout: timeout,
		idle:    make(map[string][]*rpc.Client),
		busy:    make(map[*rpc.Client]struct{}),
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
		if reused && errors.Is(call.Error, rpc.ErrShutdown) {
			p.discard(c)
			continue
		}
		return p.release(addr, c, call.Error)
	}
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
	if idle := p.idle[addr]; len(idle) > 0 {
		c = idle[len(idle)-1]
		p.idle[addr] = idle[:len(idle)-1]
		p.busy[c] = struct{}{}
		p.mu.Unlock()
		return c, true, nil
	}
	p.mu.Unlock()

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

// open dials addr and announces an RPC connection.
func (p *Pool) open(ctx context.Context, addr string) (*rpc.Client, error) {
	conn, err := p.dial(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("dial server %s: %w", addr, err)
	}
	conn, err = Announce(ctx, conn, ConnRPC, p.tls)
	if err != nil {
		return nil, fmt.Errorf("dial server %s: %w", addr, err)
	}
	return rpc.NewClientWithCodec(newClientCodec(conn)), nil
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
	p.mu.Unlock()
	for _, c := range all {
		c.Close()
	}
}
