// Package planqueue is the leader's plan queue: it owns the plans that
// scheduler workers submitted and the single plan applier has not taken
// yet, in priority then submission order, and the futures their
// submitters wait on.
//
// The Queue lives only in memory on the leader: the server enables it on
// gaining leadership and disables it on losing it, which answers every
// queued plan with ErrDisabled. It must not check plans against the state
// store, apply them through Raft or know about the server: the applier in
// package nomad does that and answers each plan through its Pending.
package planqueue
