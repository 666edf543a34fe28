// Package search is the matching behind the Search endpoints: which
// contexts a token may search, the IDs of a context that start with a
// prefix, and the fuzzy match of a text against the names of jobs (their
// groups, tasks, services and driver settings), nodes, allocs, node pools
// and namespaces, with Nomad's limits, truncations and order.
//
// It reads a state store and filters by an ACL it is given. It must not
// resolve tokens, forward RPCs or block: the endpoint in package nomad
// does those and hands it the store and the ACL.
package search
