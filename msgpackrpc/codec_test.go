package msgpackrpc

import (
	"net"
	"net/rpc"
	"testing"

	"github.com/shoenig/test/must"
)

// TestCodec_ClosedCodecReadsFail checks that a closed codec fails reads
// instead of decoding nothing into an empty message: net/rpc would take
// that for an answer to call 0 (the client) or a request (the server).
func TestCodec_ClosedCodecReadsFail(t *testing.T) {
	cases := []struct {
		name string
		read func(conn net.Conn) error
	}{
		{"client", func(conn net.Conn) error {
			c := newClientCodec(conn)
			_ = c.Close()
			var resp rpc.Response
			return c.ReadResponseHeader(&resp)
		}},
		{"server", func(conn net.Conn) error {
			c := NewServerCodec(conn)
			_ = c.Close()
			var req rpc.Request
			return c.ReadRequestHeader(&req)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, other := net.Pipe()
			defer other.Close()
			must.ErrorIs(t, tc.read(conn), net.ErrClosed)
		})
	}
}
