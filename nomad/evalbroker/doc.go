// Package evalbroker is the leader's eval broker: it owns the pending
// evaluations between the FSM that writes them and the scheduler workers
// that process them — one ready queue per scheduler type, at most one
// eval per job ready or in flight, delivery tokens with a nack timer,
// delayed redelivery, the failed queue for evals past the delivery limit,
// and the superseded evals the leader cancels.
//
// The Broker lives only in memory on the leader: the server enables it on
// gaining leadership, refills it from the state store, and disables it
// (dropping everything) on losing it. It must not read or write the state
// store, apply anything through Raft or know about the server; whoever
// enqueues decides which evals it sees, and the leader turns its failed
// and cancelable evals into Raft writes.
package evalbroker
