// Package batchqueue is the leader's batch job queue: it holds
// register-triggered batch evaluations back, releases them to the eval
// broker in FIFO or priority order a few at a time, and watches the state
// store until each released job is placed, constrained or stalled.
//
// The policy is pure functions of state rows and a time:
//
//   - Route (route.go) decides whether a new eval enters the queue; the
//     state store calls it from inside the write that stores the eval
//     (state.SetBatchQueueRouter), so state holds no queue policy.
//   - Less and Heap (order.go) keep the line in release order.
//   - Controls.Apply (controls.go) is the one rule by which operators'
//     holds and tops reorder it; the line that releases and the listing
//     both go through it, so the listing shows the release order.
//   - Judge (verdict.go) computes a released workload's status.
//   - Plan (plan.go) decides a round: from the configuration, the released
//     workloads with their verdicts and the queued line, what to release,
//     what is done and why, and when to wake.
//
// The Queue (queue.go) is the thin shell: each round of its Run loop
// (runner.go) reads what changed in state, plans, commits the decision
// through a Committer as one Raft entry, and waits on memdb watch sets
// and one deadline timer. The line (line.go) is what orders and
// releases: the queued rows in heaps read from the queue table, pulled
// by Plan in release order and committed. The watcher (watcher.go) is
// what follows released work until it is placed: it judges each
// released workload and watches its evals and allocs. The listing
// (listing.go) serves readers from the state store and the last
// published round.
package batchqueue
