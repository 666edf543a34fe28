// Package e2e runs whole nomadq agents as separate processes on loopback
// and checks what a user would see: leader failover with SIGKILL, a client
// restarted under running tasks. Its tests build bin/nomad themselves.
//
// Tests that take minutes (failover, soak, scale) run only when
// NOMADQ_E2E_LONG=1, which `make e2e-long` sets.
package e2e
