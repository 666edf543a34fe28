package command

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

const allocStatusUsage = `
Usage: nomad alloc status [options] <allocation>

  Display information about existing allocations and their tasks.
`

// resolveAlloc finds the one allocation an ID prefix names.
func resolveAlloc(c *api.Client, prefix string, verbose bool) (*api.AllocationListStub, error) {
	if len(prefix) == 1 {
		return nil, fmt.Errorf("Identifier must contain at least two characters.")
	}
	prefix = sanitizeUUIDPrefix(prefix)
	allocs, _, err := c.Allocations().PrefixList(prefix)
	if err != nil {
		return nil, fmt.Errorf("Error querying allocation: %v", err)
	}
	if len(allocs) == 0 {
		return nil, fmt.Errorf("No allocation(s) with prefix or id %q found", prefix)
	}
	if len(allocs) > 1 {
		return nil, &errAmbiguous{msg: fmt.Sprintf("Prefix matched multiple allocations\n\n%s", formatAllocListStubs(allocs, verbose))}
	}
	return allocs[0], nil
}

func runAllocStatus(args []string, s Streams) int {
	var (
		af      apiFlags
		verbose bool
		asJSON  bool
		tmpl    string
		stats   bool
	)
	fs := newFlagSet("alloc status", s.Stderr, allocStatusUsage)
	af.register(fs)
	fs.BoolVar(&verbose, "verbose", false, "Show full information")
	fs.BoolVar(&asJSON, "json", false, "Output the allocation in its JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display allocation using a Go template")
	fs.BoolVar(&stats, "stats", false, "Display detailed resource usage statistics")
	fs.Bool("short", false, "Display short output")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if fs.NArg() == 0 && (asJSON || tmpl != "") {
		allocs, _, err := client.Allocations().List(nil)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error querying allocations: %v\n", err)
			return 1
		}
		_, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, allocs)
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one of the following argument conditions:\n * A single <allocation>\n * No arguments, with output format specified")
		return 1
	}
	stub, err := resolveAlloc(client, fs.Arg(0), verbose)
	if err != nil {
		if amb, ok := err.(*errAmbiguous); ok {
			fmt.Fprintln(s.Stdout, amb.msg)
			return 0
		}
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	alloc, _, err := client.Allocations().Info(stub.ID, &api.QueryOptions{Namespace: stub.Namespace})
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying allocation: %s\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, alloc); done {
		return code
	}
	fmt.Fprintln(s.Stdout, formatAllocBasic(alloc, verbose))
	if addrs := formatAllocAddresses(alloc); addrs != "" {
		fmt.Fprintf(s.Stdout, "\n%s\n", addrs)
	}
	if verbose && alloc.Metrics != nil {
		fmt.Fprintf(s.Stdout, "\nPlacement Metrics\n%s", formatAllocMetrics(alloc.Metrics, true, "  "))
	}
	_, _ = client.Allocations().Checks(alloc.ID, nil)
	usage, err := client.Allocations().Stats(alloc, nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Couldn't retrieve stats: %v\n", err)
		usage = nil
	}
	fmt.Fprint(s.Stdout, formatTaskStates(alloc, usage, verbose))
	return 0
}

func formatAllocBasic(a *api.Allocation, verbose bool) string {
	now := time.Now()
	rows := []string{
		"ID|" + shortID(a.ID, verbose),
		"Eval ID|" + shortID(a.EvalID, verbose),
		"Name|" + a.Name,
		"Node ID|" + shortID(a.NodeID, verbose),
		"Node Name|" + a.NodeName,
		"Job ID|" + a.JobID,
		fmt.Sprintf("Job Version|%d", jobVersion(a)),
		"Client Status|" + a.ClientStatus,
		"Client Description|" + orNone(a.ClientDescription),
		"Desired Status|" + a.DesiredStatus,
		"Desired Description|" + orNone(a.DesiredDescription),
		"Created|" + prettyTimeDiff(time.Unix(0, a.CreateTime), now),
		"Modified|" + prettyTimeDiff(time.Unix(0, a.ModifyTime), now),
	}
	rows = append(rows, allocDeadlineRow(a, verbose)...)
	if verbose {
		rows = append(rows,
			"Evaluated Nodes|"+fmt.Sprint(metricsValue(a, func(m *api.AllocationMetric) int { return m.NodesEvaluated })),
			"Filtered Nodes|"+fmt.Sprint(metricsValue(a, func(m *api.AllocationMetric) int { return m.NodesFiltered })),
			"Exhausted Nodes|"+fmt.Sprint(metricsValue(a, func(m *api.AllocationMetric) int { return m.NodesExhausted })),
			"Allocation Time|"+fmt.Sprint(metricsDuration(a)),
			"Failures|"+fmt.Sprint(metricsValue(a, func(m *api.AllocationMetric) int { return m.CoalescedFailures })),
		)
	}
	if a.NextAllocation != "" {
		rows = append(rows, "Replacement Alloc ID|"+shortID(a.NextAllocation, verbose))
	}
	if a.FollowupEvalID != "" {
		rows = append(rows, "Follow-up Eval ID|"+shortID(a.FollowupEvalID, verbose))
	}
	return formatKV(rows)
}

func jobVersion(a *api.Allocation) uint64 {
	if a.Job != nil && a.Job.Version != nil {
		return *a.Job.Version
	}
	return 0
}

func metricsValue(a *api.Allocation, f func(*api.AllocationMetric) int) int {
	if a.Metrics == nil {
		return 0
	}
	return f(a.Metrics)
}

func metricsDuration(a *api.Allocation) time.Duration {
	if a.Metrics == nil {
		return 0
	}
	return a.Metrics.AllocationTime
}

func formatTaskStates(a *api.Allocation, usage *api.AllocResourceUsage, verbose bool) string {
	var b strings.Builder
	tasks := sortedKeys(a.TaskStates)
	if len(tasks) == 0 && a.Job != nil {
		if tg := a.Job.LookupTaskGroup(a.TaskGroup); tg != nil {
			for _, t := range tg.Tasks {
				tasks = append(tasks, t.Name)
			}
			sort.Strings(tasks)
		}
	}
	for _, task := range tasks {
		st := a.TaskStates[task]
		state := "pending"
		if st != nil {
			state = st.State
		}
		fmt.Fprintf(&b, "\nTask %q is %q\n", task, state)
		if res, ok := a.TaskResources[task]; ok && res != nil {
			b.WriteString("Task Resources:\n")
			cpuHeader := "CPU"
			if res.Cores != nil && *res.Cores > 0 {
				cpuHeader = fmt.Sprintf("CPU (%d cores)", *res.Cores)
			}
			rows := []string{cpuHeader + "|Memory|Disk|Addresses"}
			cpu, mem := 0, 0
			if res.CPU != nil {
				cpu = *res.CPU
			}
			if res.MemoryMB != nil {
				mem = *res.MemoryMB
			}
			disk := 0
			if a.Resources != nil && a.Resources.DiskMB != nil {
				disk = *a.Resources.DiskMB
			}
			usedCPU, usedMem := "0", "0 B"
			if usage != nil {
				if tu, ok := usage.Tasks[task]; ok && tu != nil && tu.ResourceUsage != nil {
					if cs := tu.ResourceUsage.CpuStats; cs != nil {
						usedCPU = fmt.Sprintf("%d", int(cs.TotalTicks))
					}
					if ms := tu.ResourceUsage.MemoryStats; ms != nil {
						usedMem = humanBytes(ms.RSS)
					}
				}
			}
			rows = append(rows, fmt.Sprintf("%s/%d MHz|%s/%s|%s|", usedCPU, cpu, usedMem, humanBytes(uint64(mem)*1024*1024), humanBytes(uint64(disk)*1024*1024)))
			b.WriteString(formatList(rows))
			b.WriteString("\n")
		}
		if st == nil {
			continue
		}
		b.WriteString("\nTask Events:\n")
		rows := []string{
			"Started At|" + formatTime(st.StartedAt),
			"Finished At|" + formatTime(st.FinishedAt),
			fmt.Sprintf("Total Restarts|%d", st.Restarts),
			"Last Restart|" + formatTime(st.LastRestart),
		}
		b.WriteString(formatKV(rows))
		b.WriteString("\n\nRecent Events:\n")
		erows := []string{"Time|Type|Description"}
		events := st.Events
		for i := len(events) - 1; i >= 0; i-- {
			e := events[i]
			if !verbose && len(erows) > 10 {
				break
			}
			desc := e.DisplayMessage
			if desc == "" {
				desc = e.Message
			}
			erows = append(erows, fmt.Sprintf("%s|%s|%s", formatTime(time.Unix(0, e.Time)), e.Type, strings.ReplaceAll(desc, "|", "/")))
		}
		b.WriteString(formatList(erows))
		b.WriteString("\n")
	}
	return b.String()
}
