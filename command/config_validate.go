package command

import (
	"fmt"

	"github.com/nomadq/nomadq/agent/config"
)

const configValidateUsage = `
Usage: nomad config validate <config_path> [<config_path>...]

  Checks agent configuration files and directories the way "nomad agent
  -config" reads them: each file or directory's .hcl and .json files in
  order, later ones over earlier ones, then the checks the agent makes
  before it starts. Fragments that are not a whole configuration (no
  server or client enabled, no data_dir) fail the agent's checks too.

  Keys Nomad has but nomadq does not implement are reported as warnings.

  Exits 0 if the configuration is valid and 1 if it is not.
`

func runConfigValidate(args []string, s Streams) int {
	fs := newFlagSet("config validate", s.Stderr, configValidateUsage)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() < 1 {
		fmt.Fprintln(s.Stderr, "Must specify at least one config file or directory")
		return 1
	}
	cfg := config.Default()
	warn := func(w string) { fmt.Fprintf(s.Stderr, "Warning: %s\n", w) }
	for _, p := range fs.Args() {
		before := len(cfg.Files)
		if err := config.Load(cfg, []string{p}, warn); err != nil {
			fmt.Fprintf(s.Stderr, "Error loading configuration from %s: %s\n", p, err)
			return 1
		}
		if len(cfg.Files) == before {
			fmt.Fprintf(s.Stderr, "Warning: No configuration loaded from %s\n", p)
		}
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(s.Stderr, err)
		fmt.Fprintln(s.Stderr, "Configuration is invalid")
		return 1
	}
	fmt.Fprintln(s.Stdout, "Configuration is valid!")
	return 0
}
