package structs

import (
	"reflect"
	"sync"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// MsgpackHandle is the codec for Raft log entries, snapshots and RPC.
//
// What round-trips:
//   - every typed field of this package's structs, exactly;
//   - time.Time as the msgpack timestamp extension, to the nanosecond; the
//     decoded value is in UTC and carries no monotonic clock reading, so
//     compare times with Equal, not ==; the zero time stays zero;
//   - schema-less values (driver Config, map[string]any): maps decode as
//     map[string]any, arrays as []any, every integer as int64, floats as
//     float64, and strings and []byte as string. A config built from those
//     types (as decoded JSON or HCL is) comes back unchanged.
var MsgpackHandle = newMsgpackHandle()

func newMsgpackHandle() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	// The current msgpack spec: str8 and bin types, and the timestamp
	// extension for time.Time.
	h.WriteExt = true
	h.RawToString = true
	h.SignedInteger = true
	h.MapType = reflect.TypeFor[map[string]any]()
	return h
}

// JsonHandle is the codec for the /v1 HTTP API. It keeps <, > and & as
// they are instead of escaping them for HTML, and decodes schema-less
// values (driver Config) the way MsgpackHandle does: objects as
// map[string]any, whole numbers as int64, other numbers as float64.
var JsonHandle = newJSONHandle(0)

// JsonHandlePretty is JsonHandle with four-space indentation, for
// "?pretty".
var JsonHandlePretty = newJSONHandle(4)

func newJSONHandle(indent int8) *codec.JsonHandle {
	h := &codec.JsonHandle{HTMLCharsAsIs: true, Indent: indent}
	h.SignedInteger = true
	h.MapType = reflect.TypeFor[map[string]any]()
	if err := h.SetInterfaceExt(reflect.TypeFor[Node](), 1, nodeJSON{}); err != nil {
		panic("register the node JSON extension: " + err.Error())
	}
	return h
}

// Encode returns msg as a Raft log entry: one byte of message type followed
// by the msgpack encoding of msg.
func Encode(t MessageType, msg any) ([]byte, error) {
	e := encoderPool.Get().(*pooledEncoder)
	defer encoderPool.Put(e)
	e.buf = e.buf[:0]
	e.enc.ResetBytes(&e.buf)
	if err := e.enc.Encode(msg); err != nil {
		return nil, err
	}
	out := make([]byte, len(e.buf)+1)
	out[0] = byte(t)
	copy(out[1:], e.buf)
	return out, nil
}

// pooledEncoder keeps an encoder and its scratch buffer for reuse; both
// are costly to build for every Raft entry.
type pooledEncoder struct {
	enc *codec.Encoder
	buf []byte
}

var encoderPool = sync.Pool{New: func() any {
	e := &pooledEncoder{buf: make([]byte, 0, 4096)}
	e.enc = codec.NewEncoderBytes(&e.buf, MsgpackHandle)
	return e
}}

// Decode decodes msgpack from buf into out. For a Raft log entry made by
// Encode, pass the bytes after the message type: Decode(entry[1:], &req).
func Decode(buf []byte, out any) error {
	return codec.NewDecoderBytes(buf, MsgpackHandle).Decode(out)
}
