// Package nomad is the nomadq server: Raft (the FSM that applies its
// entries is package fsm) and the RPC endpoints, leadership and the loops
// the leader runs, the workers and the plan applier. The leader keeps
// evaluations on their way to placements in memory-only structures — the
// eval broker (package evalbroker), the blocked-eval tracker (package
// blockedevals) and the plan queue (package planqueue) — which are
// enabled when leadership is gained, rebuilt from the state store, and
// flushed when it is lost. The FSM publishes what each entry committed to
// the event stream buffer (package eventbroker). Structures and logic
// that never touch the Server live in such sub-packages: the plan fit
// checks (planfit), root keys and signing (keyring), the Job.Plan dry run
// (jobplan), search matching (search), variable lock leases (varlock),
// the group committer of client updates (internal/groupcommit).
package nomad
