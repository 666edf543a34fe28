package command

import "fmt"

const nodeEligibilityUsage = `
Usage: nomad node eligibility [options] <node>

  Toggles a node's scheduling eligibility. An ineligible node takes no
  new allocations; those it runs keep running. Either -enable or -disable
  must be given.
`

func runNodeEligibility(args []string, s Streams) int {
	var (
		af                    apiFlags
		enable, disable, self bool
	)
	fs := newFlagSet("node eligibility", s.Stderr, nodeEligibilityUsage)
	af.register(fs)
	fs.BoolVar(&enable, "enable", false, "Mark node as eligible for scheduling")
	fs.BoolVar(&disable, "disable", false, "Mark node as ineligible for scheduling")
	fs.BoolVar(&self, "self", false, "Set the eligibility of the local node")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	usageErr := func(msg string) int {
		fmt.Fprintln(s.Stderr, msg)
		fmt.Fprintln(s.Stderr, "For additional help try 'nomad node eligibility -help'")
		return 1
	}
	switch {
	case enable == disable:
		return usageErr("Either the '-enable' or '-disable' flag must be set")
	case self && fs.NArg() != 0, !self && fs.NArg() != 1:
		return usageErr("Node ID must be specified if -self isn't being used")
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error initializing client: %s\n", err)
		return 1
	}
	_, node, _, err := resolveNodeArg(client, fs, self, "Error updating scheduling eligibility")
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if _, err := client.Nodes().ToggleEligibility(node.ID, enable, nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error updating scheduling eligibility: %s\n", err)
		return 1
	}
	state := "ineligible"
	if enable {
		state = "eligible"
	}
	fmt.Fprintf(s.Stdout, "Node %q scheduling eligibility set: %s for scheduling\n", node.ID, state)
	return 0
}
