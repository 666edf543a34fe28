// Package fsm is the server's Raft state machine: it applies committed
// log entries to the state store, the store's only writer, and takes and
// restores the snapshots Raft asks for.
//
// It owns the decoding of every Raft message type, the group commit of
// entries Raft hands over together (ApplyBatch), the hand-off of each
// written eval to the leader's broker, blocked set or batch queue (as the
// state write that stored it decided), and turning each entry's commits
// into event stream events.
//
// It must not block: the broker, the blocked set and the event broker it
// hands to are in-memory and never wait, and are disabled on followers.
// It must not know about the server, RPC or Raft's transport; entries are
// committed elsewhere (nomad's raftApply) and only applied here. Every
// server applies the same entries to the same state, so nothing it does
// may depend on the clock, the leader or how entries were grouped.
package fsm
