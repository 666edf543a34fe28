package nomad

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"

	"github.com/nomadq/nomadq/structs"
)

// maxEntryDepth is how deep the maps and lists of a Raft entry may nest.
// The msgpack decoder every server reads the log with stops at 1,024
// levels; an entry deeper than that is accepted by the encoder, committed,
// and then cannot be decoded by any server, which stops every one of them
// (a committed entry that does not decode is a fault, fsm.ErrCorruptEntry).
// Job validation refuses deep free-form values long before this; this
// catches whatever else a request can nest (a scale request's meta).
const maxEntryDepth = 1000

// checkEntryDepth refuses an encoded entry (type byte and msgpack) whose
// maps and lists nest deeper than maxEntryDepth, with a 400 naming the
// message type. It reads the msgpack without decoding it.
func checkEntryDepth(t structs.MessageType, buf []byte) error {
	depth, err := msgpackDepth(buf[1:], maxEntryDepth)
	if err != nil {
		return fmt.Errorf("encode %s: %w", t, err)
	}
	if depth > maxEntryDepth {
		return structs.NewErrRPCCoded(http.StatusBadRequest, fmt.Sprintf(
			"%s: the request's maps and lists nest more than %d levels, more than a server reads back from its Raft log",
			t, maxEntryDepth))
	}
	return nil
}

// msgpackDepth returns how deep the maps and arrays of one msgpack value
// nest (0 for a scalar), stopping once it is past limit.
func msgpackDepth(b []byte, limit int) (int, error) {
	// pending[i] is how many values are still to read at depth i+1.
	var pending []uint64
	deepest := 0
	remaining := uint64(1) // values at the top level
	for {
		for remaining == 0 {
			if len(pending) == 0 {
				return deepest, nil
			}
			remaining = pending[len(pending)-1]
			pending = pending[:len(pending)-1]
		}
		if len(b) == 0 {
			return 0, errors.New("msgpack: truncated")
		}
		remaining--
		c := b[0]
		b = b[1:]
		var n uint64 // elements of a container
		container := false
		skip := 0 // bytes after the type byte
		switch {
		case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		case c&0xf0 == 0x80:
			n, container = uint64(c&0x0f)*2, true
		case c&0xf0 == 0x90:
			n, container = uint64(c&0x0f), true
		case c&0xe0 == 0xa0:
			skip = int(c & 0x1f)
		default:
			var size, lenBytes int
			switch c {
			case 0xcc, 0xd0:
				size = 1
			case 0xcd, 0xd1:
				size = 2
			case 0xca, 0xce, 0xd2:
				size = 4
			case 0xcb, 0xcf, 0xd3:
				size = 8
			case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
				size = 1 + 1<<(c-0xd4)
			case 0xc4, 0xd9:
				lenBytes = 1
			case 0xc5, 0xda:
				lenBytes = 2
			case 0xc6, 0xdb:
				lenBytes = 4
			case 0xc7:
				lenBytes, size = 1, 1
			case 0xc8:
				lenBytes, size = 2, 1
			case 0xc9:
				lenBytes, size = 4, 1
			case 0xdc, 0xde:
				lenBytes, container = 2, true
			case 0xdd, 0xdf:
				lenBytes, container = 4, true
			default:
				return 0, fmt.Errorf("msgpack: unknown type byte 0x%02x", c)
			}
			if len(b) < lenBytes {
				return 0, errors.New("msgpack: truncated")
			}
			var l uint64
			switch lenBytes {
			case 1:
				l = uint64(b[0])
			case 2:
				l = uint64(binary.BigEndian.Uint16(b))
			case 4:
				l = uint64(binary.BigEndian.Uint32(b))
			}
			b = b[lenBytes:]
			if container {
				n = l
				if c == 0xde || c == 0xdf {
					n *= 2
				}
			} else {
				skip = size + int(l)
			}
		}
		if container {
			if n == 0 {
				deepest = max(deepest, len(pending)+1)
				continue
			}
			pending = append(pending, remaining)
			remaining = n
			deepest = max(deepest, len(pending))
			if deepest > limit {
				return deepest, nil
			}
			continue
		}
		if len(b) < skip {
			return 0, errors.New("msgpack: truncated")
		}
		b = b[skip:]
	}
}
