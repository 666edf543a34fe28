package client

import "github.com/nomadq/nomadq/structs"

// ComputedClass returns the class the client registers a node with: a
// hash of everything feasibility depends on, so that nodes equal for the
// scheduler share it. Other node agents (the node simulator) use it so
// their nodes class exactly like real ones.
func ComputedClass(n *structs.Node) string { return computedClass(n) }
