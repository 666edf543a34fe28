// Package nodedrain is the leader's node drainer: it owns the decision of
// which allocations leave a draining node now and when its drain is over
// (planDrains, a pure function of the state store and the time, per the
// deadline, IgnoreSystemJobs and each group's migrate block), and the
// loop that commits those decisions and sleeps on watch sets until an
// input or the next deadline changes them.
//
// The Drainer keeps nothing of its own: every drain, its deadline
// included, is in state, so a new leader picks up where the old one
// stopped. It must not write to the state store or Raft itself (it
// commits through a Writer, which the server backs with Raft), place
// replacement allocations (the scheduler does, on the evals it writes),
// or know about the server.
package nodedrain
