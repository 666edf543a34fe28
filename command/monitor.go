package command

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// monitorPollInterval is how often the monitor polls a pending eval, as
// Nomad's CLI does.
var monitorPollInterval = time.Second

// monitor follows an evaluation to a terminal status, printing what it
// creates the way Nomad's CLI does. It returns 0 when everything was
// placed, 2 on placement failures and 1 on errors.
type monitor struct {
	client  *api.Client
	out     io.Writer
	verbose bool
	now     func() time.Time
}

func newMonitor(c *api.Client, out io.Writer, verbose bool) *monitor {
	return &monitor{client: c, out: out, verbose: verbose, now: time.Now}
}

func (m *monitor) ts() string { return m.now().Format(time.RFC3339) }

func (m *monitor) monitor(evalID string) int {
	fmt.Fprintf(m.out, "==> %s: Monitoring evaluation %q\n", m.ts(), shortID(evalID, m.verbose))
	seen := map[string]string{} // alloc ID -> last printed client status
	status := ""
	triggerShown := false
	queuedAt := 0
	for {
		eval, _, err := m.client.Evaluations().Info(evalID, &api.QueryOptions{Params: map[string]string{"related": "true"}})
		if err != nil {
			fmt.Fprintf(m.out, "No evaluation with id %q found\n", evalID)
			return 1
		}
		if !triggerShown {
			switch {
			case eval.NodeID != "":
				fmt.Fprintf(m.out, "    %s: Evaluation triggered by node %q\n", m.ts(), shortID(eval.NodeID, m.verbose))
			case eval.JobID != "":
				fmt.Fprintf(m.out, "    %s: Evaluation triggered by job %q\n", m.ts(), eval.JobID)
			}
			triggerShown = true
		}
		allocs, _, err := m.client.Evaluations().Allocations(evalID, nil)
		if err != nil {
			fmt.Fprintf(m.out, "%s: Error reading allocations: %s\n", m.ts(), err)
			return 1
		}
		sort.Slice(allocs, func(i, j int) bool { return allocs[i].Name < allocs[j].Name })
		for _, a := range allocs {
			if _, ok := seen[a.ID]; ok {
				continue
			}
			seen[a.ID] = a.ClientStatus
			switch {
			case a.CreateIndex < eval.CreateIndex:
				fmt.Fprintf(m.out, "    %s: Allocation %q modified: node %q, group %q\n", m.ts(), shortID(a.ID, m.verbose), shortID(a.NodeID, m.verbose), a.TaskGroup)
			case a.DesiredStatus == "run":
				fmt.Fprintf(m.out, "    %s: Allocation %q created: node %q, group %q\n", m.ts(), shortID(a.ID, m.verbose), shortID(a.NodeID, m.verbose), a.TaskGroup)
			}
		}
		if eval.Status != status {
			if status != "" {
				fmt.Fprintf(m.out, "    %s: Evaluation status changed: %q -> %q\n", m.ts(), status, eval.Status)
			}
			status = eval.Status
		}
		switch eval.Status {
		case "complete", "failed", "canceled":
		default:
			if eval.Status == "pending" && eval.Type == "batch" {
				if pos := queuePosition(m.client, eval.Namespace, eval.JobID); pos != queuedAt {
					queuedAt = pos
					if pos > 0 {
						fmt.Fprintf(m.out, "    %s: Job %q queued at position %d in the batch queue\n", m.ts(), eval.JobID, pos)
					}
				}
			}
			time.Sleep(monitorPollInterval)
			continue
		}

		code := 0
		if len(eval.FailedTGAllocs) == 0 {
			fmt.Fprintf(m.out, "==> %s: Evaluation %q finished with status %q\n", m.ts(), shortID(eval.ID, m.verbose), eval.Status)
		} else {
			code = 2
			fmt.Fprintf(m.out, "==> %s: Evaluation %q finished with status %q but failed to place all allocations:\n", m.ts(), shortID(eval.ID, m.verbose), eval.Status)
			for _, tg := range sortedKeys(eval.FailedTGAllocs) {
				metrics := eval.FailedTGAllocs[tg]
				noun := "allocation"
				if metrics.CoalescedFailures > 0 {
					noun += "s"
				}
				fmt.Fprintf(m.out, "    %s: Task Group %q (failed to place %d %s):\n", m.ts(), tg, metrics.CoalescedFailures+1, noun)
				fmt.Fprint(m.out, formatAllocMetrics(metrics, false, "      "))
			}
			if eval.BlockedEval != "" {
				fmt.Fprintf(m.out, "    %s: Evaluation %q waiting for additional capacity to place remainder\n", m.ts(), shortID(eval.BlockedEval, m.verbose))
			}
		}
		if eval.Status == "failed" && code == 0 {
			code = 1
		}
		if eval.NextEval != "" {
			if eval.Wait > 0 {
				fmt.Fprintf(m.out, "    %s: Monitoring next evaluation %q in %s\n", m.ts(), shortID(eval.NextEval, m.verbose), eval.Wait)
				time.Sleep(eval.Wait)
			}
			return m.monitor(eval.NextEval)
		}
		return code
	}
}

// formatAllocMetrics explains placement metrics, one "* ..." line each.
func formatAllocMetrics(metrics *api.AllocationMetric, scores bool, prefix string) string {
	var b strings.Builder
	if metrics.NodesEvaluated == 0 {
		fmt.Fprintf(&b, "%s* No nodes were eligible for evaluation\n", prefix)
	}
	for _, dc := range sortedKeys(metrics.NodesAvailable) {
		if metrics.NodesAvailable[dc] == 0 {
			fmt.Fprintf(&b, "%s* No nodes are available in datacenter %q\n", prefix, dc)
		}
	}
	for _, c := range sortedKeys(metrics.ClassFiltered) {
		fmt.Fprintf(&b, "%s* Class %q: %d nodes excluded by filter\n", prefix, c, metrics.ClassFiltered[c])
	}
	for _, c := range sortedKeys(metrics.ConstraintFiltered) {
		fmt.Fprintf(&b, "%s* Constraint %q: %d nodes excluded by filter\n", prefix, c, metrics.ConstraintFiltered[c])
	}
	if metrics.NodesExhausted > 0 {
		fmt.Fprintf(&b, "%s* Resources exhausted on %d nodes\n", prefix, metrics.NodesExhausted)
	}
	for _, c := range sortedKeys(metrics.ClassExhausted) {
		fmt.Fprintf(&b, "%s* Class %q exhausted on %d nodes\n", prefix, c, metrics.ClassExhausted[c])
	}
	for _, d := range sortedKeys(metrics.DimensionExhausted) {
		fmt.Fprintf(&b, "%s* Dimension %q exhausted on %d nodes\n", prefix, d, metrics.DimensionExhausted[d])
	}
	if scores {
		for _, s := range metrics.ScoreMetaData {
			fmt.Fprintf(&b, "%s* Score %q = %f\n", prefix, s.NodeID, s.NormScore)
		}
	}
	return b.String()
}
