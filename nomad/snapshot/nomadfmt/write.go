package nomadfmt

import (
	"errors"
	"io"

	"github.com/nomadq/nomadq/state"
)

// Write encodes a state snapshot as a Nomad FSM snapshot stream
// (state.bin) that Nomad 2.0 restores, and returns the bytes written.
//
// PLACEHOLDER: implemented by the write-path work of issue 46.
func Write(w io.Writer, snap *state.StateSnapshot) (int64, error) {
	return 0, errors.New("writing Nomad snapshots is not implemented yet")
}
