package msgpackrpc

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// handshakeTimeout bounds a TLS handshake on a fresh connection, so a
// server that accepts but never answers holds up no caller for long.
const handshakeTimeout = 10 * time.Second

// Announce opens a connection to a server's RPC port for kind (ConnRPC
// or ConnRaft): it writes the kind's byte, or, with cfg set, ConnTLS,
// completes a TLS handshake with cfg and writes the kind's byte inside
// TLS. The handshake gives up when ctx ends or after handshakeTimeout.
// It returns the connection to carry the traffic on and closes conn on
// failure.
func Announce(ctx context.Context, conn net.Conn, kind byte, cfg *tls.Config) (net.Conn, error) {
	if cfg == nil {
		if _, err := conn.Write([]byte{kind}); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
	if _, err := conn.Write([]byte{ConnTLS}); err != nil {
		conn.Close()
		return nil, err
	}
	tc := tls.Client(conn, cfg)
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	if _, err := tc.Write([]byte{kind}); err != nil {
		tc.Close()
		return nil, err
	}
	return tc, nil
}
