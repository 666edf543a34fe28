package nomad

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/nomadq/nomadq/msgpackrpc"
)

// raftLayer is Raft's stream layer on the shared RPC port: incoming Raft
// connections are handed over by the RPC listener after their first byte,
// outgoing ones announce themselves with that byte.
type raftLayer struct {
	addr    net.Addr
	connCh  chan net.Conn
	closeCh chan struct{}
	once    sync.Once
	// tls, when set, makes outgoing Raft connections TLS.
	tls *tls.Config
}

func newRaftLayer(addr net.Addr) *raftLayer {
	return &raftLayer{addr: addr, connCh: make(chan net.Conn), closeCh: make(chan struct{})}
}

func (l *raftLayer) handoff(c net.Conn) {
	select {
	case l.connCh <- c:
	case <-l.closeCh:
		c.Close()
	}
}

// Accept returns the next incoming Raft connection.
func (l *raftLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.connCh:
		return c, nil
	case <-l.closeCh:
		return nil, errors.New("raft layer closed")
	}
}

// Close stops accepting.
func (l *raftLayer) Close() error {
	l.once.Do(func() { close(l.closeCh) })
	return nil
}

// Addr is the advertised RPC address.
func (l *raftLayer) Addr() net.Addr { return l.addr }

// Dial opens a Raft connection to another server.
func (l *raftLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", string(address), timeout)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return msgpackrpc.Announce(ctx, conn, msgpackrpc.ConnRaft, l.tls)
}
