// Package structs holds nomadq's internal data model: jobs, task groups,
// tasks, evaluations, allocations, nodes, plans, the scheduler
// configuration, and the messages written to the Raft log.
//
// The field names follow Nomad's so that the /v1 HTTP API can encode these
// types directly and the official github.com/hashicorp/nomad/api client
// decodes them unchanged. The package does no I/O and imports no other
// project package.
package structs
