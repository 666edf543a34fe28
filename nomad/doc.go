// Package nomad is the nomadq server: the Raft-replicated FSM and its RPC
// endpoints, and the structures only the leader keeps in memory to turn
// evaluations into placements — the eval broker, the blocked-eval tracker
// and the plan queue. The leader-only structures are enabled when
// leadership is gained, rebuilt from the state store, and flushed when it
// is lost.
package nomad
