// Package blockedevals is the leader's blocked-eval tracker: it owns the
// evaluations that could not place every allocation, keeps one per job
// (per job and node for system jobs), and hands them back to the eval
// broker when a node change or freed capacity may let them place, or when
// they missed such a change while the scheduler worked.
//
// The Tracker lives only in memory on the leader: the server enables it on
// gaining leadership, refills it from the state store, and disables it
// (forgetting everything) on losing it. It must not read or write the
// state store, apply anything through Raft or know about the server: it
// reaches the broker only through the Enqueuer interface, and the leader
// cancels the duplicates it reports.
package blockedevals
