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

// monitorQueueGrace is how long the monitor follows a job waiting in the
// batch queue before it returns, leaving the job queued.
var monitorQueueGrace = 2 * time.Second

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
	var queuedSince time.Time
	queuedText := ""
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
				// A job waiting in the batch queue is accepted: the wait
				// can take hours, so the monitor says where it waits and
				// returns instead of blocking.
				if e := queueEntryOf(m.client, eval.Namespace, eval.JobID); e != nil && e.EvalID == eval.ID && e.Status == "queued" {
					if queuedSince.IsZero() {
						queuedSince = m.now()
					}
					if text := queueStateText(e, m.now(), inTheQueue); text != queuedText {
						queuedText = text
						fmt.Fprintf(m.out, "    %s: Job %q %s\n", m.ts(), eval.JobID, text)
					}
					// An idle queue releases a job at once: follow it
					// a moment, as without the queue, before returning.
					if m.now().Sub(queuedSince) < monitorQueueGrace {
						time.Sleep(monitorPollInterval)
						continue
					}
					fmt.Fprintf(m.out, "    %s: The job stays queued when the monitor stops: Ctrl-C leaves it queued, and \"nomad job run -detach\" returns at once\n", m.ts())
					fmt.Fprintf(m.out, "==> %s: Evaluation %q accepted into the batch queue; \"nomad job status %s\" shows its place\n", m.ts(), shortID(eval.ID, m.verbose), eval.JobID)
					return 0
				}
			}
			time.Sleep(monitorPollInterval)
			continue
		}

		// A job the queue released into a full cluster waits in the
		// queue for capacity: that is not a placement failure.
		var waiting *queueEntry
		if len(eval.FailedTGAllocs) > 0 && eval.Type == "batch" && !anyInfeasible(m.client, eval.ID) {
			if e := queueEntryOf(m.client, eval.Namespace, eval.JobID); e != nil && e.Status != "constrained" {
				waiting = e
			}
		}
		code := 0
		if waiting != nil {
			fmt.Fprintf(m.out, "==> %s: Evaluation %q finished with status %q; the job waits in the batch queue for capacity:\n", m.ts(), shortID(eval.ID, m.verbose), eval.Status)
			for _, tg := range sortedKeys(eval.FailedTGAllocs) {
				fmt.Fprintf(m.out, "    %s: Task Group %q (%d not placed yet):\n", m.ts(), tg, eval.FailedTGAllocs[tg].CoalescedFailures+1)
				fmt.Fprint(m.out, formatAllocMetrics(eval.FailedTGAllocs[tg], false, "      "))
			}
			fmt.Fprintf(m.out, "    %s: Job %q %s\n", m.ts(), eval.JobID, queueStateText(waiting, m.now(), inTheQueue))
			fmt.Fprintf(m.out, "    %s: It is placed when capacity frees; Ctrl-C or \"nomad job run -detach\" leave it waiting, and \"nomad job status %s\" follows it\n", m.ts(), eval.JobID)
		} else if len(eval.FailedTGAllocs) == 0 {
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
		if eval.NextEval != "" && waiting == nil {
			if eval.Wait > 0 {
				fmt.Fprintf(m.out, "    %s: Monitoring next evaluation %q in %s\n", m.ts(), shortID(eval.NextEval, m.verbose), eval.Wait)
				time.Sleep(eval.Wait)
			}
			return m.monitor(eval.NextEval)
		}
		return code
	}
}

// queueEntryOf returns the job's batch queue entry, or nil when it is not
// in the queue (or the queue cannot be read: the queue is an addition,
// and its absence must not fail a command).
func queueEntryOf(client *api.Client, namespace, jobID string) *queueEntry {
	if namespace == "" {
		namespace = "default"
	}
	var entries []queueEntry
	_, err := client.Raw().Query("/v1/queue/jobs", &entries, &api.QueryOptions{Namespace: namespace, Params: map[string]string{"job_id": jobID}})
	if err != nil {
		return nil
	}
	for i := range entries {
		if entries[i].JobID == jobID && entries[i].Namespace == namespace {
			return &entries[i]
		}
	}
	return nil
}

// anyInfeasible reports whether the eval found a group that no node can
// ever run (nomadq's Infeasible flag, which the official api types do
// not carry): that is a placement failure, queue or not.
func anyInfeasible(client *api.Client, evalID string) bool {
	var eval struct {
		FailedTGAllocs map[string]struct{ Infeasible bool }
	}
	if _, err := client.Raw().Query("/v1/evaluation/"+evalID, &eval, nil); err != nil {
		return false
	}
	for _, m := range eval.FailedTGAllocs {
		if m.Infeasible {
			return true
		}
	}
	return false
}

const inTheQueue = " in the batch queue"

// queueStateText is where a job stands in the batch queue, in words:
// "queued at position 2 in the batch queue (1 job ahead in the line),
// estimated start in 4m0s", "reserved in the batch queue (...)".
func queueStateText(e *queueEntry, now time.Time, where string) string {
	var b strings.Builder
	switch state := queueState(e); state {
	case "queued":
		fmt.Fprintf(&b, "queued at position %d%s", e.Position, where)
	default:
		fmt.Fprintf(&b, "%s%s", state, where)
	}
	if why := e.reasonWords(); why != "" {
		fmt.Fprintf(&b, " (%s)", why)
	}
	if e.EstimatedStart > 0 {
		b.WriteString(", estimated start " + estimatedStart(e.EstimatedStart, now))
	}
	return b.String()
}

// queueState is the entry's state as a user sees it: the listing's
// status, with placing split into reserved (waiting for capacity that a
// reservation holds) and backfilled (released ahead of a reservation).
func queueState(e *queueEntry) string {
	if e.Status == "placing" {
		switch e.Reason {
		case "Resources":
			return "reserved"
		case "Backfill":
			return "backfilled"
		}
	}
	return e.Status
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
