// Command nomad is the nomadq command line: the agent and the client CLI.
package main

import (
	"os"

	"github.com/nomadq/nomadq/client/drivers/rawexec"
	"github.com/nomadq/nomadq/command"
)

func main() {
	// The binary doubles as the raw_exec waiter; see rawexec.MaybeRunWaiter.
	if rawexec.MaybeRunWaiter() {
		return
	}
	os.Exit(command.Run(os.Args[1:], command.Streams{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
	}))
}
