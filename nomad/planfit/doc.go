// Package planfit judges a plan against the latest state for the
// leader's plan applier: which nodes' placements still fit (ready and
// eligible nodes, capacity, host ports and cores), counting the
// placements of plans answered but not yet applied (Inflight) as if they
// were.
//
// It reads a state snapshot and nothing else. It must not commit, sign
// or answer plans, or know about Raft: the applier in package nomad does
// those with what Evaluate keeps.
package planfit
