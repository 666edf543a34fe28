// Package agenttest starts whole agents for tests of other packages. Only
// tests import it, so the testing package stays out of the nomad binary.
package agenttest

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/nomadq/nomadq/agent"
	"github.com/nomadq/nomadq/agent/config"
)

// New starts a local dev agent (agent.StartLocal) for t, logging to stderr
// when NOMADQ_TEST_LOG is set, and shuts it down when the test ends.
func New(t testing.TB, modify func(*config.Config)) *agent.Agent {
	t.Helper()
	a, err := agent.StartLocal(modify, Log(), 60*time.Second)
	if err != nil {
		t.Fatalf("test agent: %v", err)
	}
	// Kill the tasks too: a client on a data dir leaves them running on
	// shutdown, as it should outside tests.
	t.Cleanup(func() { _ = a.ShutdownKillingTasks() })
	return a
}

// Log is where test agents log: stderr when NOMADQ_TEST_LOG is set,
// nowhere otherwise.
func Log() io.Writer {
	if os.Getenv("NOMADQ_TEST_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}
