// Package varlock keeps the leader's variable lock leases: a timer per
// held lock that calls for its release when the TTL passes without a
// renewal, and the lock delay during which a lapsed lock may not be taken
// again. As in Nomad, leases are not in Raft: a new leader starts every
// held lock's TTL afresh.
//
// It must not write the release itself or read the state store: the
// server restores the leases on leadership, feeds it each lock write, and
// commits the release it asks for.
package varlock
