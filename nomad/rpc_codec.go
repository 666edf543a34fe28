package nomad

import (
	"errors"
	"fmt"
	"net/rpc"
	"reflect"
)

// inmemCodec serves one RPC made by a caller in the same process: the
// arguments and the reply are passed by pointer, with no encoding. It is
// the in-process path of the architecture's "RPC (in-process, or msgpack
// over TCP to the leader)".
type inmemCodec struct {
	method string
	args   any
	reply  any
	err    error
}

func (c *inmemCodec) ReadRequestHeader(req *rpc.Request) error {
	req.ServiceMethod = c.method
	return nil
}

func (c *inmemCodec) ReadRequestBody(body any) error {
	if body == nil {
		return nil
	}
	return copyThrough(c.args, body)
}

func (c *inmemCodec) WriteResponse(resp *rpc.Response, body any) error {
	if resp.Error != "" {
		c.err = errors.New(resp.Error)
		return nil
	}
	return copyThrough(body, c.reply)
}

func (c *inmemCodec) Close() error { return nil }

// copyThrough sets *dst = *src for two pointers to the same type.
func copyThrough(src, dst any) error {
	sv, dv := reflect.ValueOf(src), reflect.ValueOf(dst)
	if sv.Kind() != reflect.Pointer || dv.Kind() != reflect.Pointer || sv.Type() != dv.Type() {
		return fmt.Errorf("rpc: in-process call with %T where %T was expected", src, dst)
	}
	dv.Elem().Set(sv.Elem())
	return nil
}
