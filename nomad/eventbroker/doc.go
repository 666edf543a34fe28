// Package eventbroker is the server's event stream buffer: it owns the
// events of the last committed Raft entries in a bounded ring, and the
// subscriptions that read them, each at its own pace, filtered by topic,
// key, namespace and ACL.
//
// The FSM publishes one batch per applied entry and never waits for a
// subscriber; a subscriber that falls further behind than the ring holds
// is dropped with a SubscriptionDroppedError. The Broker must not turn
// state changes into events (the FSM and package state do), read the
// state store, or know about HTTP or the server.
package eventbroker
