package nomadfmt

import (
	"errors"
	"io"
)

// Read decodes a Nomad FSM snapshot stream (state.bin) into a new state
// store. It refuses, before anything is returned, a stream that is
// truncated, corrupt, or holds a record type Nomad 2.0 does not write.
//
// PLACEHOLDER: implemented by the read-path work of issue 46.
func Read(r io.Reader) (*Restored, error) {
	return nil, errors.New("reading Nomad snapshots is not implemented yet")
}
