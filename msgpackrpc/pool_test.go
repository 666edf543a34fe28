package msgpackrpc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/yamux"
	"github.com/shoenig/test/must"
)

type echoArgs struct{ Value string }

// echoReply is long enough that a server can stop in the middle of it.
type echoReply struct {
	Value string
	Pad   string
}

// heldCall is an "Echo.Slow" call the server holds: the first bytes of
// its answer may be on the wire, the rest goes once release is closed.
type heldCall struct {
	value   string
	release chan struct{}
}

// slowServer speaks the RPC wire over in-memory pipes (Pool.dial is
// pointed at it), so that the race detector sees only the ordering the
// pool itself makes; a loopback socket would order every read after every
// earlier write in the process. "Echo.Fast" answers at once;
// "Echo.Slow" writes the first cut(len) bytes of its answer, hands the
// call to the test on held, and writes the rest when released.
type slowServer struct {
	cut  func(answerLen int) int
	held chan heldCall
	done chan struct{} // closed when the test ends: held calls give up

	mu      sync.Mutex
	conns   []net.Conn
	dials   int // connections
	streams int // RPC streams over them
	wg      sync.WaitGroup
}

func newSlowServer(t *testing.T, cut func(answerLen int) int) *slowServer {
	t.Helper()
	s := &slowServer{cut: cut, held: make(chan heldCall), done: make(chan struct{})}
	t.Cleanup(func() {
		close(s.done)
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// dial is a Pool.dial that connects to this server whatever the address.
func (s *slowServer) dial() func(context.Context, string) (net.Conn, error) {
	return func(context.Context, string) (net.Conn, error) {
		client, server := net.Pipe()
		s.mu.Lock()
		s.dials++
		s.conns = append(s.conns, server)
		s.mu.Unlock()
		s.wg.Go(func() { s.serve(server) })
		return client, nil
	}
}

// serve takes a multiplexed connection, as a server does, and serves
// each of its streams.
func (s *slowServer) serve(conn net.Conn) {
	defer conn.Close()
	first := make([]byte, 1)
	if _, err := io.ReadFull(conn, first); err != nil || first[0] != ConnMultiplexV2 {
		return
	}
	sess, err := yamux.Server(conn, MuxConfig())
	if err != nil {
		return
	}
	defer sess.Close()
	for {
		stream, err := sess.AcceptStream()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.streams++
		s.mu.Unlock()
		s.wg.Go(func() { s.serveStream(stream) })
	}
}

func (s *slowServer) serveStream(conn net.Conn) {
	defer conn.Close()
	first := make([]byte, 1)
	if _, err := io.ReadFull(conn, first); err != nil || first[0] != ConnRPC {
		return
	}
	sc := NewServerCodec(conn)
	// Answers on one connection go out whole and in turn, as net/rpc's
	// server sends them.
	var wmu sync.Mutex
	var calls sync.WaitGroup
	defer calls.Wait()
	for {
		var req rpc.Request
		if err := sc.ReadRequestHeader(&req); err != nil {
			return
		}
		var args echoArgs
		if err := sc.ReadRequestBody(&args); err != nil {
			return
		}
		var answer []byte
		if req.ServiceMethod == "Echo.Fail" {
			// net/rpc's server sends an empty body with an error.
			answer = encodeAnswer(rpc.Response{ServiceMethod: req.ServiceMethod, Seq: req.Seq, Error: "boom"}, struct{}{})
		} else {
			answer = encodeAnswer(rpc.Response{ServiceMethod: req.ServiceMethod, Seq: req.Seq}, &echoReply{Value: args.Value, Pad: strings.Repeat("p", 4096)})
		}
		calls.Go(func() {
			wmu.Lock()
			defer wmu.Unlock()
			if req.ServiceMethod != "Echo.Slow" {
				_, _ = conn.Write(answer)
				return
			}
			n := s.cut(len(answer))
			if n > 0 {
				// A pipe hands even an empty write to the reader, as a
				// read of nothing that the decoder takes for an answer.
				_, _ = conn.Write(answer[:n])
			}
			release := make(chan struct{})
			select {
			case s.held <- heldCall{value: args.Value, release: release}:
			case <-s.done:
				return
			}
			select {
			case <-release:
			case <-s.done:
				return
			}
			_, _ = conn.Write(answer[n:])
		})
	}
}

// encodeAnswer returns the bytes a server sends for resp and body.
func encodeAnswer(resp rpc.Response, body any) []byte {
	var buf bytes.Buffer
	sc := NewServerCodec(struct {
		io.Reader
		io.Writer
		io.Closer
	}{bytes.NewReader(nil), &buf, io.NopCloser(nil)})
	if err := sc.WriteResponse(&resp, body); err != nil {
		panic(fmt.Sprintf("encode %T into memory: %v", body, err)) // a bug in the test
	}
	return buf.Bytes()
}

// TestPool_CancelledCallLeavesReplyAlone cancels a call while the server
// holds its answer and checks that the reply is the caller's once Call
// returned: nothing decodes into it afterwards (-race sees it if
// something does), even when the rest of the answer arrives.
func TestPool_CancelledCallLeavesReplyAlone(t *testing.T) {
	cases := []struct {
		name string
		cut  func(answerLen int) int
	}{
		{"before the answer", func(int) int { return 0 }},
		{"halfway through the answer", func(n int) int { return n / 2 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newSlowServer(t, tc.cut)
			pool := NewPool(5 * time.Second)
			pool.dial = srv.dial()
			t.Cleanup(pool.Shutdown)

			ctx, cancel := context.WithCancel(t.Context())
			var reply echoReply
			errCh := make(chan error, 1)
			go func() { errCh <- pool.Call(ctx, "server", "Echo.Slow", &echoArgs{Value: "theirs"}, &reply) }()
			held := <-srv.held
			cancel()
			must.ErrorIs(t, <-errCh, context.Canceled)

			// The caller owns reply again: it writes it, lets the rest of
			// the answer go, and writes it again while the answer arrives.
			// A decode into reply after Call returned shows in the values;
			// -race also reports it whenever nothing else happens to order
			// it after the caller's writes (always, when the answer
			// stopped halfway and the decoder had begun on reply).
			reply.Value = "mine"
			close(held.release)
			reply.Pad = "also mine"
			// A call answered after the rest of the held answer was sent
			// (on the same connection if the pool reused it) proves the
			// rest has been read by whoever reads it.
			var next echoReply
			must.NoError(t, pool.Call(t.Context(), "server", "Echo.Fast", &echoArgs{Value: "next"}, &next))
			must.Eq(t, "next", next.Value)
			must.Eq(t, echoReply{Value: "mine", Pad: "also mine"}, reply)
		})
	}
}

// TestPool_CancelLeavesOtherCallsAlone cancels one of two calls in
// flight to the same server; the other still gets its answer.
func TestPool_CancelLeavesOtherCallsAlone(t *testing.T) {
	srv := newSlowServer(t, func(int) int { return 0 })
	pool := NewPool(5 * time.Second)
	pool.dial = srv.dial()
	t.Cleanup(pool.Shutdown)

	ctx, cancel := context.WithCancel(t.Context())
	errA := make(chan error, 1)
	go func() { errA <- pool.Call(ctx, "server", "Echo.Slow", &echoArgs{Value: "a"}, &echoReply{}) }()
	var replyB echoReply
	errB := make(chan error, 1)
	go func() { errB <- pool.Call(t.Context(), "server", "Echo.Slow", &echoArgs{Value: "b"}, &replyB) }()
	// Both calls are at the server before one is cancelled. Only a guard
	// against hanging: calls that shared a connection would queue behind
	// the held answer, and the second would never arrive.
	guard, stop := context.WithTimeout(t.Context(), 30*time.Second)
	defer stop()
	held := map[string]heldCall{}
	for range 2 {
		select {
		case h := <-srv.held:
			held[h.value] = h
		case <-guard.Done():
			t.Fatalf("the server holds %d of 2 calls in flight: do calls share a connection?", len(held))
		}
	}

	cancel()
	must.ErrorIs(t, <-errA, context.Canceled)
	close(held["a"].release)
	close(held["b"].release)
	must.NoError(t, <-errB)
	must.Eq(t, "b", replyB.Value)
}

// TestPool_SlowDialDoesNotBlockOtherServers holds the dial to one server
// and calls another meanwhile.
func TestPool_SlowDialDoesNotBlockOtherServers(t *testing.T) {
	srv := newSlowServer(t, nil)
	pool := NewPool(5 * time.Second)
	t.Cleanup(pool.Shutdown)

	dialing := make(chan struct{})
	release := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	pool.dial = func(ctx context.Context, addr string) (net.Conn, error) {
		if addr == "slow" {
			close(dialing)
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return srv.dial()(ctx, addr)
	}

	slowErr := make(chan error, 1)
	go func() {
		slowErr <- pool.Call(t.Context(), "slow", "Echo.Fast", &echoArgs{Value: "slow"}, &echoReply{})
	}()
	<-dialing

	// Only a guard against hanging: a pool that dials under its lock
	// would keep this call waiting until the slow dial ends, i.e. never.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var reply echoReply
	must.NoError(t, pool.Call(ctx, "fast", "Echo.Fast", &echoArgs{Value: "fast"}, &reply))
	must.Eq(t, "fast", reply.Value)

	releaseOnce.Do(func() { close(release) })
	must.NoError(t, <-slowErr)
}

// TestPool_KeepsOnlyConnectionsInStep makes two calls in a row and counts
// the streams they took: a stream is reused after an answer, including
// the server's error, and replaced after anything that may have left it
// mid-message or closed. Both calls share one connection.
func TestPool_KeepsOnlyConnectionsInStep(t *testing.T) {
	cases := []struct {
		name        string
		first       func(ctx context.Context, p *Pool) error
		wantErr     string
		wantStreams int
	}{
		{
			name: "answered",
			first: func(ctx context.Context, p *Pool) error {
				return p.Call(ctx, "server", "Echo.Fast", &echoArgs{}, &echoReply{})
			},
			wantStreams: 1,
		},
		{
			name: "the server's error",
			first: func(ctx context.Context, p *Pool) error {
				return p.Call(ctx, "server", "Echo.Fail", &echoArgs{}, &echoReply{})
			},
			wantErr:     "boom",
			wantStreams: 1,
		},
		{
			name: "an answer that does not fit the reply",
			first: func(ctx context.Context, p *Pool) error {
				var wrong int
				return p.Call(ctx, "server", "Echo.Fast", &echoArgs{}, &wrong)
			},
			wantErr:     "reading body",
			wantStreams: 2,
		},
		{
			name: "closed while idle",
			first: func(ctx context.Context, p *Pool) error {
				err := p.Call(ctx, "server", "Echo.Fast", &echoArgs{}, &echoReply{})
				// What net/rpc's reader does when the server hangs up.
				p.mu.Lock()
				p.idle["server"][0].Close()
				p.mu.Unlock()
				return err
			},
			wantStreams: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newSlowServer(t, nil)
			pool := NewPool(5 * time.Second)
			pool.dial = srv.dial()
			t.Cleanup(pool.Shutdown)

			err := tc.first(t.Context(), pool)
			if tc.wantErr == "" {
				must.NoError(t, err)
			} else {
				must.ErrorContains(t, err, tc.wantErr)
			}
			var reply echoReply
			must.NoError(t, pool.Call(t.Context(), "server", "Echo.Fast", &echoArgs{Value: "second"}, &reply))
			must.Eq(t, "second", reply.Value)
			srv.mu.Lock()
			defer srv.mu.Unlock()
			must.Eq(t, tc.wantStreams, srv.streams)
			must.Eq(t, 1, srv.dials)
		})
	}
}

// TestPool_MultiplexesCallsOverOneConnection holds several calls to one
// server at once: they share one connection, each on a stream of its
// own, and each gets its own answer.
func TestPool_MultiplexesCallsOverOneConnection(t *testing.T) {
	srv := newSlowServer(t, func(int) int { return 0 })
	pool := NewPool(5 * time.Second)
	pool.dial = srv.dial()
	t.Cleanup(pool.Shutdown)

	const calls = 8
	replies := make([]echoReply, calls)
	errs := make(chan error, calls)
	for i := range calls {
		go func() {
			errs <- pool.Call(t.Context(), "server", "Echo.Slow", &echoArgs{Value: fmt.Sprint(i)}, &replies[i])
		}()
	}
	var held []heldCall
	for range calls {
		held = append(held, <-srv.held)
	}
	srv.mu.Lock()
	must.Eq(t, 1, srv.dials)
	must.Eq(t, calls, srv.streams)
	srv.mu.Unlock()
	for _, h := range held {
		close(h.release)
	}
	for range calls {
		must.NoError(t, <-errs)
	}
	for i, r := range replies {
		must.Eq(t, fmt.Sprint(i), r.Value)
	}
}

// TestPool_ReplacesClosedConnection closes the connection under an idle
// pool: the next call dials a new one and succeeds.
func TestPool_ReplacesClosedConnection(t *testing.T) {
	srv := newSlowServer(t, nil)
	pool := NewPool(5 * time.Second)
	pool.dial = srv.dial()
	t.Cleanup(pool.Shutdown)

	must.NoError(t, pool.Call(t.Context(), "server", "Echo.Fast", &echoArgs{}, &echoReply{}))
	pool.mu.Lock()
	sess := pool.sessions["server"].sess
	pool.mu.Unlock()
	srv.mu.Lock()
	for _, c := range srv.conns {
		c.Close()
	}
	srv.mu.Unlock()
	<-sess.CloseChan()
	var reply echoReply
	must.NoError(t, pool.Call(t.Context(), "server", "Echo.Fast", &echoArgs{Value: "again"}, &reply))
	must.Eq(t, "again", reply.Value)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	must.Eq(t, 2, srv.dials)
}

// TestPool_Shutdown fails the call in flight and every later one.
func TestPool_Shutdown(t *testing.T) {
	srv := newSlowServer(t, func(int) int { return 0 })
	pool := NewPool(5 * time.Second)
	pool.dial = srv.dial()

	errCh := make(chan error, 1)
	go func() { errCh <- pool.Call(t.Context(), "server", "Echo.Slow", &echoArgs{}, &echoReply{}) }()
	held := <-srv.held
	pool.Shutdown()
	must.ErrorContains(t, <-errCh, "shut down")
	close(held.release)

	err := pool.Call(t.Context(), "server", "Echo.Fast", &echoArgs{}, &echoReply{})
	must.ErrorContains(t, err, "shut down")
	pool.Shutdown()
}
