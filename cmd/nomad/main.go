// Command nomad is the nomadq command line: the agent and the client CLI.
package main

import (
	"os"

	"github.com/nomadq/nomadq/client/drivers/executor"
	"github.com/nomadq/nomadq/command"
)

func main() {
	// The binary doubles as the waiter and init step of tasks; see executor.MaybeRun.
	if executor.MaybeRun() {
		return
	}
	os.Exit(command.Run(os.Args[1:], command.Streams{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
	}))
}
