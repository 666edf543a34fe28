// Package jobplan is the dry run behind `nomad job plan` (Job.Plan): it
// runs the scheduler on a snapshot with the planned job in place of the
// stored one, records the plan instead of submitting it, and counts per
// task group what the plan would do, in Nomad's annotation shape.
//
// It reads the state it is given and writes nothing. It must not diff
// jobs (package jobdiff does) or forward, admit and answer the request
// (the endpoint in package nomad does).
package jobplan
