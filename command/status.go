package command

import (
	"fmt"

	"github.com/hashicorp/nomad/api/contexts"
)

const statusUsage = `
Usage: nomad status [options] <identifier>

  Display the status output for any Nomad resource: the identifier (or a
  prefix of it) is looked up with a search and the matching resource's
  status command runs. Without an identifier it lists the jobs.
`

func runStatus(args []string, s Streams) int {
	var af apiFlags
	fs := newFlagSet("status", s.Stderr, statusUsage)
	af.register(fs)
	fs.Bool("verbose", false, "Display full information")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() == 0 {
		return runJobStatus(args, s)
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes either no arguments or one: <identifier>")
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	id := fs.Arg(0)
	res, _, err := client.Search().PrefixSearch(id, contexts.All, nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying search with id: %q\n", err)
		return 1
	}
	if res.Matches == nil {
		fmt.Fprintf(s.Stderr, "No matches returned for query: %q\n", err)
		return 1
	}
	var match contexts.Context
	exact := 0
	for ctx, ids := range res.Matches {
		if len(ids) > 0 && ids[0] == id {
			match = ctx
			exact++
		}
	}
	if exact != 1 {
		match = ""
		matches := 0
		for ctx, ids := range res.Matches {
			switch len(ids) {
			case 0:
			case 1:
				match = ctx
				matches++
			default:
				matches += 2
			}
		}
		if matches == 0 {
			fmt.Fprintf(s.Stderr, "No matches found for identifier %q\n", id)
			return 1
		}
		if matches > 1 {
			fmt.Fprintf(s.Stderr, "Multiple matches found for id %q\n", id)
			for _, ctx := range []contexts.Context{contexts.Jobs, contexts.Evals, contexts.Allocs, contexts.Nodes} {
				if ids := res.Matches[ctx]; len(ids) > 0 {
					fmt.Fprintf(s.Stderr, "\n%s:\n", ctx)
					for _, m := range ids {
						fmt.Fprintf(s.Stderr, "  %s\n", m)
					}
				}
			}
			return 1
		}
	}
	rest := append([]string{}, args[:len(args)-1]...)
	target := res.Matches[match][0]
	switch match {
	case contexts.Jobs:
		return runJobStatus(append(rest, target), s)
	case contexts.Evals:
		return runEvalStatus(append(rest, target), s)
	case contexts.Allocs:
		return runAllocStatus(append(rest, target), s)
	case contexts.Nodes:
		return runNodeStatus(append(rest, target), s)
	}
	fmt.Fprintf(s.Stderr, "Unable to resolve ID: %q (context %s has no status command in nomadq)\n", id, match)
	return 1
}
