// Package command implements the nomad CLI. Each command is a function
// from its arguments to an exit code; output goes to the given streams so
// tests can run commands in-process.
package command

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Streams are the standard streams a command reads and writes.
type Streams struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Env returns the process environment; tests replace it.
var Env = os.Environ

type commandFunc func(args []string, s Streams) int

type commandInfo struct {
	run      commandFunc
	synopsis string
}

// commands maps a command path ("job run") to its implementation.
var commands = map[string]commandInfo{
	"version":                       {runVersion, "Print the nomadq version"},
	"job run":                       {runJobRun, "Run a new job or update an existing job"},
	"job validate":                  {runJobValidate, "Check a job specification for errors"},
	"job status":                    {runJobStatus, "Display status information about a job"},
	"job stop":                      {runJobStop, "Stop a running job"},
	"job inspect":                   {runJobInspect, "Inspect a submitted job"},
	"job plan":                      {runJobPlan, "Dry-run a job update to determine its effects"},
	"job dispatch":                  {runJobDispatch, "Dispatch an instance of a parameterized job"},
	"job periodic force":            {runJobPeriodicForce, "Force the launch of a periodic job"},
	"alloc status":                  {runAllocStatus, "Display allocation status information and metadata"},
	"alloc logs":                    {runAllocLogs, "Stream the logs of a task"},
	"eval status":                   {runEvalStatus, "Display evaluation status and placement failure reasons"},
	"eval list":                     {runEvalList, "List the set of evaluations"},
	"node status":                   {runNodeStatus, "Display status information about nodes"},
	"server members":                {runServerMembers, "Display a list of the known servers and their status"},
	"status":                        {runStatus, "Display the status output for a resource"},
	"agent":                         {runAgent, "Run a nomadq agent"},
	"agent-info":                    {runAgentInfo, "Display status information about the local agent"},
	"operator scheduler get-config": {runSchedulerGetConfig, "Display the current scheduler configuration"},
	"operator scheduler set-config": {runSchedulerSetConfig, "Modify the current scheduler configuration"},
	"queue status":                  {runQueueStatus, "Display the batch job queue's settings and depth"},
	"queue jobs":                    {runQueueJobs, "List the jobs in the batch job queue"},
}

// Run dispatches args to the matching command and returns its exit code.
func Run(args []string, s Streams) int {
	if len(args) == 0 || isHelp(args[0]) {
		printUsage(s.Stderr, "")
		return 1
	}
	if args[0] == "-v" || args[0] == "--version" || args[0] == "-version" {
		return runVersion(nil, s)
	}
	// The longest command path that matches wins: "job run" before "job".
	for n := min(len(args), 3); n > 0; n-- {
		name := strings.Join(args[:n], " ")
		if c, ok := commands[name]; ok {
			return c.run(args[n:], s)
		}
	}
	if hasSubcommands(args[0]) {
		printUsage(s.Stderr, args[0])
		return 1
	}
	fmt.Fprintf(s.Stderr, "Unknown command %q\n\n", strings.Join(args, " "))
	printUsage(s.Stderr, "")
	return 1
}

func isHelp(a string) bool {
	return a == "-h" || a == "-help" || a == "--help" || a == "help"
}

func hasSubcommands(prefix string) bool {
	for name := range commands {
		if strings.HasPrefix(name, prefix+" ") {
			return true
		}
	}
	return false
}

func printUsage(w io.Writer, prefix string) {
	if prefix == "" {
		fmt.Fprintln(w, "Usage: nomad [-version] [-help] <command> [args]")
	} else {
		fmt.Fprintf(w, "Usage: nomad %s <subcommand> [options] [args]\n", prefix)
	}
	fmt.Fprintln(w, "\nAvailable commands are:")
	var names []string
	for name := range commands {
		if prefix == "" || strings.HasPrefix(name, prefix+" ") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "    %-16s %s\n", name, commands[name].synopsis)
	}
}
