package command

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

const autopilotGetConfigUsage = `
Usage: nomad operator autopilot get-config [options]

  Displays the current Autopilot configuration.

  -json   Output the Autopilot configuration in JSON format.
  -t      Format and display the Autopilot configuration using a Go template.
`

func runAutopilotGetConfig(args []string, s Streams) int {
	var (
		af     apiFlags
		asJSON bool
		tmpl   string
	)
	fs := newFlagSet("operator autopilot get-config", s.Stderr, autopilotGetConfigUsage)
	af.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the Autopilot configuration in JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the Autopilot configuration using a Go template")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	c, _, err := client.Operator().AutopilotGetConfiguration(nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying Autopilot configuration: %s\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, c); done {
		return code
	}
	fmt.Fprintf(s.Stdout, "CleanupDeadServers = %v\n", c.CleanupDeadServers)
	fmt.Fprintf(s.Stdout, "LastContactThreshold = %s\n", c.LastContactThreshold)
	fmt.Fprintf(s.Stdout, "MaxTrailingLogs = %d\n", c.MaxTrailingLogs)
	fmt.Fprintf(s.Stdout, "MinQuorum = %d\n", c.MinQuorum)
	fmt.Fprintf(s.Stdout, "ServerStabilizationTime = %s\n", c.ServerStabilizationTime)
	fmt.Fprintf(s.Stdout, "EnableRedundancyZones = %v\n", c.EnableRedundancyZones)
	fmt.Fprintf(s.Stdout, "DisableUpgradeMigration = %v\n", c.DisableUpgradeMigration)
	fmt.Fprintf(s.Stdout, "EnableCustomUpgrades = %v\n", c.EnableCustomUpgrades)
	return 0
}

const autopilotSetConfigUsage = `
Usage: nomad operator autopilot set-config [options]

  Modifies the current Autopilot configuration. Only the settings given
  change; the update is a check-and-set on the configuration read first.

  -cleanup-dead-servers=[true|false]
     Whether dead servers are removed when new ones are added.
  -last-contact-threshold=200ms
     How long a server may go without contact from the leader before it
     is unhealthy.
  -max-trailing-logs=<value>
     How many log entries a server may trail the leader by before it is
     unhealthy.
  -min-quorum=<value>
     The number of servers below which dead servers are not pruned.
  -server-stabilization-time=10s
     How long a new server must be healthy before it becomes a voter.
  -enable-redundancy-zones, -disable-upgrade-migration,
  -enable-custom-upgrades
     Nomad Enterprise settings: nomadq refuses true.
`

// durationFlag is a duration flag that records whether it was set.
type durationFlag struct {
	set   bool
	value time.Duration
}

func (d *durationFlag) String() string { return d.value.String() }
func (d *durationFlag) Set(v string) error {
	x, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf(`must be a duration such as "200ms" or "10s"`)
	}
	d.set, d.value = true, x
	return nil
}

// uintFlag is an unsigned flag that records whether it was set.
type uintFlag struct {
	set   bool
	value uint64
}

func (u *uintFlag) String() string { return strconv.FormatUint(u.value, 10) }
func (u *uintFlag) Set(v string) error {
	x, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return fmt.Errorf("must be an unsigned integer")
	}
	u.set, u.value = true, x
	return nil
}

func runAutopilotSetConfig(args []string, s Streams) int {
	var (
		af                                           apiFlags
		cleanup, redundancy, noMigration, customUpgr boolFlag
		maxTrailing, minQuorum                       uintFlag
		lastContact, stabilization                   durationFlag
	)
	fs := newFlagSet("operator autopilot set-config", s.Stderr, autopilotSetConfigUsage)
	af.register(fs)
	fs.Var(&cleanup, "cleanup-dead-servers", "Whether dead servers are removed when new ones are added")
	fs.Var(&maxTrailing, "max-trailing-logs", "How many log entries a server may trail the leader by")
	fs.Var(&minQuorum, "min-quorum", "The number of servers below which dead servers are not pruned")
	fs.Var(&lastContact, "last-contact-threshold", "How long a server may go without contact from the leader")
	fs.Var(&stabilization, "server-stabilization-time", "How long a new server must be healthy before it votes")
	fs.Var(&redundancy, "enable-redundancy-zones", "Nomad Enterprise only; refused")
	fs.Var(&noMigration, "disable-upgrade-migration", "Nomad Enterprise only; refused")
	fs.Var(&customUpgr, "enable-custom-upgrades", "Nomad Enterprise only; refused")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	op := client.Operator()
	c, _, err := op.AutopilotGetConfiguration(nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying for Autopilot configuration: %s\n", err)
		return 1
	}
	for _, b := range []struct {
		f    *boolFlag
		into *bool
	}{
		{&cleanup, &c.CleanupDeadServers}, {&redundancy, &c.EnableRedundancyZones},
		{&noMigration, &c.DisableUpgradeMigration}, {&customUpgr, &c.EnableCustomUpgrades},
	} {
		if b.f.set {
			*b.into = b.f.value
		}
	}
	if maxTrailing.set {
		c.MaxTrailingLogs = maxTrailing.value
	}
	if minQuorum.set {
		c.MinQuorum = uint(minQuorum.value)
	}
	if lastContact.set {
		c.LastContactThreshold = lastContact.value
	}
	if stabilization.set {
		c.ServerStabilizationTime = stabilization.value
	}
	updated, _, err := op.AutopilotCASConfiguration(c, nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error setting Autopilot configuration: %s\n", err)
		return 1
	}
	if !updated {
		fmt.Fprintln(s.Stdout, "Configuration could not be atomically updated, please try again")
		return 1
	}
	fmt.Fprintln(s.Stdout, "Configuration updated!")
	return 0
}

const autopilotHealthUsage = `
Usage: nomad operator autopilot health [options]

  Displays the health of the servers as Autopilot sees it. A cluster that
  is not healthy is an error (exit code 1), as in Nomad.

  -json   Output the autopilot health in JSON format.
`

func runAutopilotHealth(args []string, s Streams) int {
	var (
		af     apiFlags
		asJSON bool
	)
	fs := newFlagSet("operator autopilot health", s.Stderr, autopilotHealthUsage)
	af.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the autopilot health in JSON format")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	h, _, err := client.Operator().AutopilotServerHealth(nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying Autopilot configuration: %s\n", err)
		return 1
	}
	if asJSON {
		b, err := json.Marshal(h)
		if err != nil {
			fmt.Fprintf(s.Stderr, "failed to serialize autopilot health: %v\n", err)
			return 1
		}
		fmt.Fprintln(s.Stdout, string(b))
		return 0
	}
	fmt.Fprintf(s.Stdout, "Healthy: %t\n", h.Healthy)
	fmt.Fprintf(s.Stdout, "FailureTolerance: %d\n", h.FailureTolerance)
	fmt.Fprintf(s.Stdout, "Leader: %s\n", h.Leader)
	voters := make([]string, len(h.Voters))
	for i, v := range h.Voters {
		voters[i] = "\t" + v
	}
	fmt.Fprintf(s.Stdout, "Voters:  \n%s\n", formatList(voters))
	rows := []string{"ID|Name|Address|SerfStatus|Version|Leader|Voter|Healthy|LastContact|LastTerm|LastIndex|StableSince"}
	for _, p := range h.Servers {
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%s|%t|%t|%t|%s|%d|%d|%s",
			p.ID, p.Name, p.Address, p.SerfStatus, p.Version, p.Leader, p.Voter, p.Healthy,
			p.LastContact, p.LastTerm, p.LastIndex, p.StableSince))
	}
	fmt.Fprintf(s.Stdout, "Servers: \n%s\n", formatList(rows))
	return 0
}
