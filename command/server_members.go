package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/api"
)

const serverMembersUsage = `
Usage: nomad server members [options]

  Display a list of the known servers and their status.
`

func runServerMembers(args []string, s Streams) int {
	var (
		af       apiFlags
		detailed bool
		asJSON   bool
		tmpl     string
	)
	fs := newFlagSet("server members", s.Stderr, serverMembersUsage)
	af.register(fs)
	fs.BoolVar(&detailed, "verbose", false, "Show detailed information about each member")
	fs.BoolVar(&asJSON, "json", false, "Output the members in JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display members using a Go template")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	mem, err := client.Agent().Members()
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying servers: %s\n", err)
		return 1
	}
	sort.Slice(mem.Members, func(i, j int) bool { return mem.Members[i].Name < mem.Members[j].Name })
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, mem.Members); done {
		return code
	}
	leaders := map[string]string{}
	for _, m := range mem.Members {
		region := m.Tags["region"]
		if _, ok := leaders[region]; ok || m.Status == "left" {
			continue
		}
		q := &api.QueryOptions{Region: region}
		var leader string
		if _, err := client.Raw().Query("/v1/status/leader", &leader, q); err == nil {
			leaders[region] = leader
		}
	}
	rows := []string{"Name|Address|Port|Status|Leader|Raft Version|Build|Datacenter|Region"}
	if detailed {
		rows[0] = "Name|Address|Port|Tags"
	}
	for _, m := range mem.Members {
		if detailed {
			var tags []string
			for _, k := range sortedKeys(m.Tags) {
				tags = append(tags, k+"="+m.Tags[k])
			}
			rows = append(rows, fmt.Sprintf("%s|%s|%d|%s", m.Name, m.Addr, m.Port, strings.Join(tags, ",")))
			continue
		}
		isLeader := leaders[m.Tags["region"]] == m.Addr+":"+m.Tags["port"]
		rows = append(rows, fmt.Sprintf("%s|%s|%d|%s|%v|%s|%s|%s|%s", m.Name, m.Addr, m.Port, m.Status, isLeader, m.Tags["raft_vsn"], m.Tags["build"], m.Tags["dc"], m.Tags["region"]))
	}
	fmt.Fprintln(s.Stdout, formatList(rows))
	return 0
}

const agentInfoUsage = `
Usage: nomad agent-info [options]

  Display status information about the local agent.
`

func runAgentInfo(args []string, s Streams) int {
	var (
		af     apiFlags
		asJSON bool
		tmpl   string
	)
	fs := newFlagSet("agent-info", s.Stderr, agentInfoUsage)
	af.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the agent info in JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the agent info using a Go template")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	info, err := client.Agent().Self()
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying agent info: %s\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, info); done {
		return code
	}
	for _, section := range sortedKeys(info.Stats) {
		fmt.Fprintln(s.Stdout, section)
		stats := info.Stats[section]
		for _, k := range sortedKeys(stats) {
			fmt.Fprintf(s.Stdout, "  %s = %s\n", k, stats[k])
		}
	}
	return 0
}
