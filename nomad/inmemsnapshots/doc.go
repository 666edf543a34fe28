// Package inmemsnapshots is a dev server's Raft snapshot store: it owns
// the latest complete snapshot, kept in memory in fixed-size chunks, and
// the deferred encoding that lets the FSM hand over a function that
// writes an immutable state snapshot instead of the bytes, run only if
// the snapshot is ever read.
//
// It keeps one snapshot and nothing on disk, so it must not back a server
// that restarts from its snapshots or sends them to followers. It must
// not know about the FSM, the state store or the server: content reaches
// it through the raft.SnapshotSink and DeferringSink it hands out.
package inmemsnapshots
