package nomad

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/msgpackrpc"
	"github.com/nomadq/nomadq/structs"
)

// TestRPC_CallsShareOneConnection holds many blocking queries from one
// pool at once: the server sees one connection, every query wakes on the
// write it waited for, and the connection is still the only one after.
func TestRPC_CallsShareOneConnection(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)
	first := registerJob(t, s, mockJob("watched"))

	pool := msgpackrpc.NewPool(5 * time.Second)
	t.Cleanup(pool.Shutdown)
	const calls = 50
	type result struct {
		resp structs.SingleJobResponse
		err  error
	}
	done := make(chan result, calls)
	for range calls {
		go func() {
			var r result
			r.err = pool.Call(t.Context(), s.RPCAddr().String(), "Job.Get", &structs.JobSpecificRequest{
				JobID:        "watched",
				QueryOptions: structs.QueryOptions{MinQueryIndex: first.Index, MaxQueryTime: int64(time.Minute)},
			}, &r.resp)
			done <- r
		}()
	}
	changed := mockJob("watched")
	changed.Priority = 80
	second := registerJob(t, s, changed)
	for range calls {
		r := <-done
		must.NoError(t, r.err)
		must.Eq(t, second.Index, r.resp.Index)
	}
	s.connsLock.Lock()
	conns := len(s.conns)
	s.connsLock.Unlock()
	must.Eq(t, 1, conns, must.Sprint(fmt.Sprintf("%d calls took %d connections", calls, conns)))
}

// TestRPC_ConnectionCapAndHandshakeTimeout: an address over
// rpc_max_conns_per_client has its next connection closed at once, and
// a connection that never says what it carries is closed after
// rpc_handshake_timeout; a freed slot serves calls again.
func TestRPC_ConnectionCapAndHandshakeTimeout(t *testing.T) {
	var logs syncBuffer
	s := testServer(t, func(c *Config) {
		c.NumSchedulers = 0
		c.RPCMaxConnsPerClient = 2
		c.RPCHandshakeTimeout = 300 * time.Millisecond
		c.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})
	})
	waitForLeader(t, s)
	addr := s.RPCAddr().String()

	// closedByServer reports whether the server hangs up on conn within
	// a generous bound, well under the 10 s the server used to wait for
	// a first byte (an open connection times out the read instead).
	closedByServer := func(conn net.Conn) bool {
		must.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err := conn.Read(make([]byte, 1))
		return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
	}

	t.Run("silent connection", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		must.NoError(t, err)
		defer conn.Close()
		must.True(t, closedByServer(conn))
	})

	t.Run("over the cap", func(t *testing.T) {
		var held []net.Conn
		for range 2 {
			conn, err := net.Dial("tcp", addr)
			must.NoError(t, err)
			defer conn.Close()
			// A connection that said it carries RPC stays open.
			_, err = conn.Write([]byte{msgpackrpc.ConnRPC})
			must.NoError(t, err)
			held = append(held, conn)
		}
		// The server took both before the third arrives.
		pool := msgpackrpc.NewPool(5 * time.Second)
		defer pool.Shutdown()
		var out string
		err := pool.Call(t.Context(), addr, "Status.Leader", &structs.GenericRequest{}, &out)
		must.Error(t, err)

		over, err := net.Dial("tcp", addr)
		must.NoError(t, err)
		defer over.Close()
		_, _ = over.Write([]byte{msgpackrpc.ConnRPC})
		must.True(t, closedByServer(over))
		must.StrContains(t, logs.String(), "rejecting RPC connection: too many connections from this address: remote=127.0.0.1:")
		must.StrContains(t, logs.String(), "limit=2 key=limits.rpc_max_conns_per_client")

		held[0].Close()
		var pinged bool
		for range 100 {
			if err := pool.Call(t.Context(), addr, "Status.Leader", &structs.GenericRequest{}, &out); err == nil {
				pinged = true
				break
			}
			time.Sleep(50 * time.Millisecond) // the server frees the slot when it sees the close
		}
		must.True(t, pinged)
	})
}
