package command

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	hcli "github.com/hashicorp/cli"
	"github.com/posener/complete"
)

// Run dispatches args to the matching command through hashicorp/cli and
// returns its exit code. As in Nomad, -help prints a command's help to
// stdout, an unknown command prints the list of commands to stderr and
// exits 127, and COMP_LINE in the environment turns the run into a shell
// completion request. A mistyped command is named, with the closest
// command when one is near ("Did you mean ...?").
func Run(args []string, s Streams) int {
	if c, rest, ok := helpBelongsToCommand(args); ok {
		return c.run(rest, s)
	}
	c := &hcli.CLI{
		Name:                       "nomad",
		Version:                    versionString(),
		Args:                       args,
		Commands:                   cliCommands(s),
		Autocomplete:               true,
		AutocompleteNoDefaultFlags: true,
		HelpFunc:                   topLevelHelp,
		HelpWriter:                 s.Stdout,
		ErrorWriter:                s.Stderr,
	}
	code, err := c.Run()
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error executing CLI: %s\n", err)
		return 1
	}
	// After the list of commands the library prints, so it is the last
	// line the user sees; the exit code stays the library's (127 at the
	// top level, 1 under a group), as in Nomad.
	if code != 0 {
		if msg := unknownCommand(args); msg != "" {
			fmt.Fprintln(s.Stderr, "\n"+msg)
		}
	}
	return code
}

// helpBelongsToCommand finds the runs where a help flag is an argument of
// the command and not a request for help: the remote command of exec
// (nomad alloc exec <alloc> df -h). hashicorp/cli would take any -h as a
// help request, so these runs go straight to the command.
func helpBelongsToCommand(args []string) (commandInfo, []string, bool) {
	name, n := commandPath(args)
	if name != "alloc exec" && name != "exec" {
		return commandInfo{}, nil, false
	}
	rest := args[n:]
	for i, a := range rest {
		if !strings.HasPrefix(a, "-") {
			for _, later := range rest[i+1:] {
				if later == "-h" || later == "-help" || later == "--help" {
					return commands[name], rest, true
				}
			}
			break
		}
	}
	return commandInfo{}, nil, false
}

// commandPath returns the longest command path args start with and how
// many words it has ("job run" before "job").
func commandPath(args []string) (string, int) {
	for n := min(len(args), 4); n > 0; n-- {
		name := strings.Join(args[:n], " ")
		if _, ok := commands[name]; ok {
			return name, n
		}
	}
	return "", 0
}

// cliCommands is the command table as hashicorp/cli takes it: every
// command, and a group command for every path that only has subcommands
// ("job", "operator raft").
func cliCommands(s Streams) map[string]hcli.CommandFactory {
	out := make(map[string]hcli.CommandFactory, len(commands)+len(groupSynopses))
	for name, info := range commands {
		c := &leafCommand{name: name, info: info, s: s}
		out[name] = func() (hcli.Command, error) { return c, nil }
		for p := parentPath(name); p != ""; p = parentPath(p) {
			if _, ok := commands[p]; !ok {
				g := &groupCommand{name: p}
				out[p] = func() (hcli.Command, error) { return g, nil }
			}
		}
	}
	return out
}

func parentPath(name string) string {
	if i := strings.LastIndex(name, " "); i >= 0 {
		return name[:i]
	}
	return ""
}

// hasSubcommands reports whether prefix is a group of commands.
func hasSubcommands(prefix string) bool {
	for name := range commands {
		if strings.HasPrefix(name, prefix+" ") {
			return true
		}
	}
	return false
}

// leafCommand adapts a command function to hashicorp/cli.
type leafCommand struct {
	name string
	info commandInfo
	s    Streams
}

func (c *leafCommand) Run(args []string) int { return c.info.run(args, c.s) }

func (c *leafCommand) Synopsis() string { return c.info.synopsis }

// Help is the text the command's own flag set prints for -help, so help
// reads the same whether the library or the command prints it.
func (c *leafCommand) Help() string {
	help, _ := describe(c.info.run, c.s.Stdin)
	if help == "" {
		return fmt.Sprintf("Usage: nomad %s\n\n  %s.", c.name, c.info.synopsis)
	}
	return help
}

// AutocompleteArgs predicts the command's arguments: IDs from the server
// or files, as argPredictors says.
func (c *leafCommand) AutocompleteArgs() complete.Predictor {
	if p, ok := argPredictors[c.name]; ok {
		return p
	}
	return complete.PredictNothing
}

// AutocompleteFlags predicts the command's flags, the ones its flag set
// defines, and the values of those whose values can be listed.
func (c *leafCommand) AutocompleteFlags() complete.Flags {
	_, sets := describe(c.info.run, c.s.Stdin)
	return flagPredictors(sets)
}

// groupCommand is a path that only groups subcommands ("nomad job");
// running it prints its help and the list of subcommands.
type groupCommand struct{ name string }

func (g *groupCommand) Run([]string) int { return hcli.RunResultHelp }

func (g *groupCommand) Synopsis() string { return groupSynopses[g.name] }

func (g *groupCommand) Help() string {
	return fmt.Sprintf("Usage: nomad %s <subcommand> [options] [args]\n\n  %s. Run a subcommand with -help for its options.",
		g.name, groupSynopses[g.name])
}

// groupSynopses describe the command groups in the top-level and the
// group listings.
var groupSynopses = map[string]string{
	"acl":                     "Manage the ACL system: policies, tokens, auth methods and binding rules",
	"acl auth-method":         "Manage ACL auth methods",
	"acl binding-rule":        "Manage ACL binding rules",
	"acl policy":              "Manage ACL policies",
	"acl token":               "Manage ACL tokens",
	"alloc":                   "Inspect and act on allocations",
	"config":                  "Check agent configuration files",
	"eval":                    "Inspect evaluations",
	"job":                     "Submit, inspect and change jobs",
	"job periodic":            "Act on periodic jobs",
	"namespace":               "Manage namespaces",
	"node":                    "Inspect and act on client nodes",
	"node meta":               "Change and read a client's node metadata",
	"node pool":               "Manage node pools",
	"operator":                "Tools for cluster operators",
	"operator autopilot":      "Read and change the Autopilot configuration and health",
	"operator gossip":         "Manage the servers' gossip encryption",
	"operator gossip keyring": "Manage the servers' gossip encryption keyring",
	"operator raft":           "Inspect and change the Raft peer set",
	"operator root":           "Manage the root keyring",
	"operator root keyring":   "Manage the root keys that encrypt variables and sign identities",
	"operator scheduler":      "Read and change the scheduler configuration",
	"operator snapshot":       "Save, restore and inspect snapshots of the server state",
	"queue":                   "Inspect and control the batch job queue",
	"server":                  "Inspect the servers",
	"service":                 "Interact with registered services",
	"system":                  "Run system maintenance tasks",
	"system reconcile":        "Reconcile the state the servers derive from jobs",
	"tls":                     "Create and inspect TLS certificates",
	"tls ca":                  "Create and inspect certificate authorities",
	"tls cert":                "Create and inspect certificates",
	"var":                     "Read and write variables",
}

// commonCommands lead the top-level help, as in Nomad; aliases of job
// and alloc subcommands other than these are left out of it.
var (
	commonCommands = []string{"run", "stop", "status", "alloc", "job", "node", "agent"}
	helpAliases    = map[string]bool{"init": true, "inspect": true, "logs": true, "plan": true, "validate": true}
)

// topLevelHelp lists the common commands, then the others.
func topLevelHelp(all map[string]hcli.CommandFactory) string {
	var other []string
	for name := range all {
		if !helpAliases[name] && !slices.Contains(commonCommands, name) {
			other = append(other, name)
		}
	}
	sort.Strings(other)
	width := 0
	for name := range all {
		width = max(width, len(name))
	}
	var b strings.Builder
	b.WriteString("Usage: nomad [-version] [-help] [-autocomplete-(un)install] <command> [args]\n")
	for _, section := range []struct {
		title string
		names []string
	}{{"Common commands", commonCommands}, {"Other commands", other}} {
		fmt.Fprintf(&b, "\n%s:\n", section.title)
		for _, name := range section.names {
			factory, ok := all[name]
			if !ok {
				continue
			}
			c, err := factory()
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "    %-*s    %s\n", width, name, c.Synopsis())
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func versionString() string {
	return fmt.Sprintf("Nomad v%s (nomadq)", Version)
}
