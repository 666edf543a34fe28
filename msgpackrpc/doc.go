// Package msgpackrpc is the RPC wire that clients and servers share: the
// byte that opens every connection to a server's RPC port, the msgpack
// codec for net/rpc, and Pool, through which a caller makes calls to
// servers. Clients use it to reach servers, servers to forward requests
// to the leader; a server answers with NewServerCodec.
//
// It knows nothing of either side's logic (no endpoints, no leader, no
// state store), so a client links it without linking the server.
//
// The pool keeps one TCP connection per server and multiplexes every call
// over it with yamux (ConnMultiplexV2), as Nomad's pool does, so ten
// thousand calls in flight cost one connection and one server-side
// reader rather than ten thousand. A call has a stream to itself for as
// long as it runs, and the pool keeps a few idle streams per server for
// the next calls. That is what makes cancelling safe: a cancelled call
// closes its own stream and waits for net/rpc to let go of the reply, so
// nothing writes into the caller's reply after Call returned, and no
// other call is disturbed. Dials happen outside the pool's lock, so a
// server that is slow to accept holds up only the calls to it.
package msgpackrpc
