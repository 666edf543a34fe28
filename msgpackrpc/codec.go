package msgpackrpc

import (
	"io"
	"net"
	"net/rpc"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/nomadq/nomadq/structs"
)

// The first byte of every connection to a server's RPC port says what it
// carries, so RPC and Raft share one port as in Nomad.
const (
	// ConnRPC opens a connection that carries msgpack RPC.
	ConnRPC byte = 0x01
	// ConnRaft opens a connection that carries Raft traffic.
	ConnRaft byte = 0x02
	// ConnTLS opens a connection that continues with a TLS handshake;
	// inside TLS, the first byte again says what the connection
	// carries. Nomad uses the same value.
	ConnTLS byte = 0x04
	// ConnMultiplexV2 opens a connection that carries yamux streams,
	// each opening with a byte of its own (ConnRPC) that says what it
	// carries. Nomad's pool opens its connections with the same value.
	ConnMultiplexV2 byte = 0x06
)

// NewServerCodec returns the codec a server answers RPCs with on conn,
// after its first byte (ConnRPC) was read.
func NewServerCodec(conn io.ReadWriteCloser) rpc.ServerCodec {
	return codec.GoRpc.ServerCodec(closeErrConn{conn}, structs.MsgpackHandle)
}

// newClientCodec is NewServerCodec's other end. The codec buffers reads
// and writes itself.
func newClientCodec(conn io.ReadWriteCloser) rpc.ClientCodec {
	return codec.GoRpc.ClientCodec(closeErrConn{conn}, structs.MsgpackHandle)
}

// closeErrConn makes Close report an error even when closing succeeded.
// Once go-msgpack's RPC codec is closed it answers every read and write
// with what its connection's Close returned; a nil there reads as an
// empty message, which net/rpc's client takes for the answer to its call
// number 0 and its server for a request to answer, over and over.
type closeErrConn struct{ io.ReadWriteCloser }

func (c closeErrConn) Close() error {
	if err := c.ReadWriteCloser.Close(); err != nil {
		return err
	}
	return net.ErrClosed
}
