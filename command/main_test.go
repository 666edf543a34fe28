package command

import (
	"os"
	"testing"

	"github.com/nomadq/nomadq/client/drivers/executor"
)

// runAsCLI in the environment makes the test binary the nomad binary, so
// tests can run the CLI as a shell runs it (completion reads COMP_LINE
// from the process environment and answers on stdout).
const runAsCLI = "NOMADQ_TEST_RUN_AS_CLI"

// TestMain lets the test binary double as the raw_exec waiter, so tests
// through a real agent can run raw_exec tasks, and as the CLI.
func TestMain(m *testing.M) {
	if executor.MaybeRun() {
		return
	}
	if os.Getenv(runAsCLI) == "1" {
		os.Exit(Run(os.Args[1:], Streams{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	os.Exit(m.Run())
}
