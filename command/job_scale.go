package command

import (
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
)

const jobScaleUsage = `
Usage: nomad job scale [options] <job> [<group>] <count>

  Change the count of a job's group. The group may be left out when the job
  has only one. The evaluation the change creates is monitored unless
  -detach is given.
`

func runJobScale(args []string, s Streams) int {
	var (
		af              apiFlags
		detach, verbose bool
		checkIndex      uint64
	)
	fs := newFlagSet("job scale", s.Stderr, jobScaleUsage)
	af.register(fs)
	fs.Uint64Var(&checkIndex, "check-index", 0, "Scale only if the job's modify index equals this value (0: no check)")
	fs.BoolVar(&detach, "detach", false, "Return immediately instead of monitoring the evaluation")
	fs.BoolVar(&verbose, "verbose", false, "Display full information")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	var group, countArg string
	switch fs.NArg() {
	case 2:
		countArg = fs.Arg(1)
	case 3:
		group, countArg = fs.Arg(1), fs.Arg(2)
	default:
		fmt.Fprintln(s.Stderr, "Command requires at least two arguments and no more than three")
		return 1
	}
	count, err := strconv.Atoi(countArg)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Failed to convert count string to int: %s\n", err)
		return 1
	}
	client, stub, ok := clientForJob(&af, fs.Arg(0), s)
	if !ok {
		return 1
	}
	q := &api.QueryOptions{Namespace: stub.Namespace}
	status, _, err := client.Jobs().ScaleStatus(stub.ID, q)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying job: %v\n", err)
		return 1
	}
	if group, err = scaleGroup(status.TaskGroups, group); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	n := int64(count)
	req := &api.ScalingRequest{
		Count:          &n,
		Target:         map[string]string{"Job": stub.ID, "Group": group},
		Message:        "submitted using the Nomad CLI",
		JobModifyIndex: checkIndex,
	}
	resp, _, err := client.Jobs().ScaleWithRequest(stub.ID, req, &api.WriteOptions{Namespace: stub.Namespace})
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error submitting scaling request: %s\n", err)
		return 1
	}
	if resp.Warnings != "" {
		fmt.Fprintf(s.Stdout, "Job Warnings:\n%s\n\n", resp.Warnings)
	}
	job, _, err := client.Jobs().Info(stub.ID, q)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error looking up job: %s\n", err)
		return 1
	}
	periodic := job.IsPeriodic()
	parameterized := job.IsParameterized()
	if detach || periodic || parameterized || resp.EvalID == "" {
		fmt.Fprintln(s.Stdout, "Job scale successful")
		switch {
		case periodic && !parameterized:
			if next, err := nextLaunchText(job.Periodic, time.Now()); err == nil && next != "" {
				fmt.Fprintf(s.Stdout, "Approximate next launch time: %s\n", next)
			}
		case !parameterized && resp.EvalID != "":
			fmt.Fprintln(s.Stdout, "Evaluation ID: "+resp.EvalID)
		}
		return 0
	}
	return newMonitor(client, s.Stdout, verbose).monitor(resp.EvalID)
}

// scaleGroup picks the group to scale: the one named, or the job's only
// group when none is named.
func scaleGroup(groups map[string]api.TaskGroupScaleStatus, group string) (string, error) {
	if group == "" {
		if len(groups) == 1 {
			for name := range groups {
				return name, nil
			}
		}
		return "", fmt.Errorf("Group name required")
	}
	if _, ok := groups[group]; !ok {
		return "", fmt.Errorf("Group %v not found within job", group)
	}
	return group, nil
}
