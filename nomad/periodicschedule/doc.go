// Package periodicschedule is the schedule of periodic jobs: it owns
// reading a periodic config's crons in its time zone (with the repairs
// cronexpr needs around clock changes and its panics turned into errors),
// the next launch after a given time (Next), and what the leader's
// dispatcher does with a job now (Decide: launch at the scheduled time,
// collapse missed launches into one catch-up launch, or wake later).
//
// It is a pure function of the config and the times it is given. It must
// not read the clock, the state store or Raft, or launch anything: the
// dispatcher in package nomad does, from the persisted launch records.
package periodicschedule
