package client

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/nomadq/nomadq/msgpackrpc"
	"github.com/nomadq/nomadq/structs"
)

// RPC is how the client reaches the servers: over msgpack RPC on TCP
// (through a msgpackrpc.Pool), or InProcessRPC for an agent running a
// server too.
type RPC interface {
	Call(ctx context.Context, method string, args, reply any) error
}

// InProcessRPC adapts a server in the same process (a -dev agent). Args
// and replies are copied so client and server never share memory, as
// over the network: the hot calls' types by hand (copyRPC), any other
// through a msgpack round trip.
func InProcessRPC(srv interface {
	RPC(method string, args, reply any) error
}) RPC {
	return inProcessRPC{srv: srv}
}

type inProcessRPC struct {
	srv interface {
		RPC(method string, args, reply any) error
	}
}

func (r inProcessRPC) Call(ctx context.Context, method string, args, reply any) error {
	argsCopy, ok := copyRPC(args)
	if !ok {
		var err error
		if argsCopy, err = roundTripNew(args); err != nil {
			return err
		}
	}
	// A fresh, zero reply of the same type, as net/rpc's server hands
	// its handler; decoded into the caller's after.
	tmp := newLike(reply)
	done := make(chan error, 1)
	go func() { done <- r.srv.RPC(method, argsCopy, tmp) }()
	select {
	case err := <-done:
		if err != nil {
			return err
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	if c, ok := copyRPC(tmp); ok {
		reflect.ValueOf(reply).Elem().Set(reflect.ValueOf(c).Elem())
		return nil
	}
	buf, err := structs.Encode(0, tmp)
	if err != nil {
		return err
	}
	return structs.Decode(buf[1:], reply)
}

// roundTripNew returns a pointer to a fresh copy of *v (v must be a
// pointer) made through msgpack.
func roundTripNew(v any) (any, error) {
	buf, err := structs.Encode(0, v)
	if err != nil {
		return nil, fmt.Errorf("encode rpc: %w", err)
	}
	out := newLike(v)
	if err := structs.Decode(buf[1:], out); err != nil {
		return nil, fmt.Errorf("decode rpc: %w", err)
	}
	return out, nil
}

// serverList is an RPC over several servers: calls go to the current one
// and move on to the next after a failure.
type serverList struct {
	pool *msgpackrpc.Pool

	mu    sync.Mutex
	addrs []string
	cur   int
}

func newServerList(addrs []string, timeout time.Duration) *serverList {
	return &serverList{pool: msgpackrpc.NewPool(timeout), addrs: append([]string(nil), addrs...)}
}

func (s *serverList) current() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.addrs) == 0 {
		return "", errors.New("no servers known")
	}
	return s.addrs[s.cur%len(s.addrs)], nil
}

// failed moves to the next server if addr is still the current one.
func (s *serverList) failed(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.addrs) > 0 && s.addrs[s.cur%len(s.addrs)] == addr {
		s.cur = (s.cur + 1) % len(s.addrs)
	}
}

// learn adds servers that a server told about.
func (s *serverList) learn(addrs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range addrs {
		known := false
		for _, k := range s.addrs {
			if k == a {
				known = true
				break
			}
		}
		if !known && a != "" {
			s.addrs = append(s.addrs, a)
		}
	}
}

// Call calls the current server, and on a transport failure the next one
// (each server forwards to the leader itself).
func (s *serverList) Call(ctx context.Context, method string, args, reply any) error {
	s.mu.Lock()
	n := len(s.addrs)
	s.mu.Unlock()
	var lastErr error
	for i := 0; i < max(n, 1); i++ {
		addr, err := s.current()
		if err != nil {
			return err
		}
		err = s.pool.Call(ctx, addr, method, args, reply)
		if err == nil || !isTransportError(err) || ctx.Err() != nil {
			return err
		}
		lastErr = err
		s.failed(addr)
	}
	return lastErr
}

func (s *serverList) close() { s.pool.Shutdown() }

// isTransportError tells a failure to reach a server from an answer.
func isTransportError(err error) bool {
	msg := err.Error()
	for _, s := range []string{"dial server", "connection refused", "connection reset", "broken pipe", "EOF", "shut down", "i/o timeout", "No cluster leader", "no leader",
		// What the multiplexed connection's streams fail with when it
		// breaks (yamux's errors).
		"session shutdown", "stream closed", "connection write timeout", "keepalive timeout", "remote end is not accepting connections"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// newLike returns a new zero value of the type v points to.
func newLike(v any) any {
	return reflect.New(reflect.TypeOf(v).Elem()).Interface()
}
