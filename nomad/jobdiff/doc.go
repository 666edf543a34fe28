// Package jobdiff computes how a job differs from another version of it,
// in Nomad's diff shape (structs.JobDiff down to fields and objects), for
// the plan endpoint and job version listings: a field-by-field walk over
// the job, its task groups and their tasks that leaves out what the
// server sets (indexes, version, status, submit time).
//
// Diff is a pure function of two jobs. It must not read the state store
// or format anything for humans: the CLI renders the diff.
package jobdiff
