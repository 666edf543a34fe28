// Package heartbeat holds the leader's heartbeat timers: it owns one
// expiry timer per live node, the TTL each heartbeat hands the client
// (a minimum, stretched as nodes grow to cap the leader's heartbeat rate,
// plus a random stagger) and the failover TTL a new leader gives every
// node.
//
// The Timers live only in memory on the leader and are rebuilt from state
// on every leadership gain. They must not mark a node down themselves or
// know about the server: they call the expire function they were given,
// and the server's heartbeater turns that into a Node.UpdateStatus.
package heartbeat
