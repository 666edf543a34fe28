// Package batchqueue is the leader's batch job queue: it holds
// register-triggered batch evaluations back, releases them to the eval
// broker in FIFO or priority order a few at a time, and watches the state
// store until each released job is placed, constrained or stalled.
//
// The decision parts are pure (order.go, verdict.go, policy in queue.go's
// step): they compute what to do from state rows and a time. The Queue's
// Run loop is the thin shell that reads state, commits releases through a
// Committer, and waits on memdb watch sets and one deadline timer.
package batchqueue
