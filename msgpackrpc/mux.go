package msgpackrpc

import (
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/hashicorp/yamux"
)

// MuxConfig is the yamux configuration both ends of a multiplexed
// connection use: yamux's defaults, quiet, since its errors reach the
// callers as stream and session errors.
func MuxConfig() *yamux.Config {
	cfg := yamux.DefaultConfig()
	cfg.LogOutput = io.Discard
	return cfg
}

// streamConn is a yamux stream that one RPC client owns. Closing it
// also ends reads in progress and drops any data they return: yamux's
// Close only half-closes a stream and keeps delivering what the server
// sends, which a cancelled call must not decode into a reply it gave
// back to its caller.
type streamConn struct {
	*yamux.Stream
	closed atomic.Bool
}

func (c *streamConn) Read(b []byte) (int, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	n, err := c.Stream.Read(b)
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	return n, err
}

func (c *streamConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	// A deadline in the past wakes a read blocked on the stream.
	_ = c.Stream.SetReadDeadline(time.Unix(1, 0))
	return c.Stream.Close()
}
