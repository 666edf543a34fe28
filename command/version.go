package command

import "fmt"

// Version is the release of this build; the build may override it with
// -ldflags "-X github.com/nomadq/nomadq/command.Version=...".
var Version = "0.1.0-dev"

func runVersion(_ []string, s Streams) int {
	fmt.Fprintln(s.Stdout, versionString())
	return 0
}
