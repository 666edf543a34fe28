// Command nomad is the nomadq command line: the agent and the client CLI.
package main

import (
	"os"

	"github.com/nomadq/nomadq/command"
)

func main() {
	os.Exit(command.Run(os.Args[1:], command.Streams{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
	}))
}
