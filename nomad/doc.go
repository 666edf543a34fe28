// Package nomad is the nomadq server: the Raft-replicated FSM and its RPC
// endpoints, leadership and the loops the leader runs, the workers and the
// plan applier. The leader keeps evaluations on their way to placements in
// memory-only structures — the eval broker (package evalbroker), the
// blocked-eval tracker (package blockedevals) and the plan queue (package
// planqueue) — which are enabled when leadership is gained, rebuilt from
// the state store, and flushed when it is lost. The FSM publishes what
// each entry committed to the event stream buffer (package eventbroker).
// Structures that never touch the Server live in such sub-packages.
package nomad
