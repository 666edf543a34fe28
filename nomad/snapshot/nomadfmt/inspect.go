package nomadfmt

import (
	"errors"
	"io"
)

// Inspect counts the records of a Nomad FSM snapshot stream per type, in
// the order Nomad's "operator snapshot inspect" prints them (largest size
// first), and the total.
//
// PLACEHOLDER: implemented by the operator-snapshot work of issue 46.
func Inspect(r io.Reader) (stats []TypeCount, total TypeCount, err error) {
	return nil, TypeCount{}, errors.New("inspecting Nomad snapshots is not implemented yet")
}
