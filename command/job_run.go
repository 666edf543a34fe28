package command

import (
	"fmt"
	"time"

	"github.com/hashicorp/nomad/api"
)

const jobRunUsage = `
Usage: nomad job run [options] <path>

  Starts running a new job or updates an existing job using the
  specification at <path> ("-" reads standard input). The file is parsed
  and validated locally before it is sent to the agent.

  With -json, the file is the API's JSON job, such as the output of
  "nomad job run -output" or "nomad job inspect", with or without the
  outer {"Job": ...} object. A file in that shape is recognised without
  -json too; a job file in HCL's JSON syntax ({"job": ...}) is read as a
  job file.
`

func runJobRun(args []string, s Streams) int {
	var (
		af         apiFlags
		jf         jobFileFlags
		output     bool
		detach     bool
		checkIndex uint64
		verbose    bool
	)
	fs := newFlagSet("job run", s.Stderr, jobRunUsage)
	af.register(fs)
	jf.register(fs)
	fs.BoolVar(&output, "output", false, "Print the JSON the job would be submitted as, and exit")
	fs.BoolVar(&detach, "detach", false, "Return after submitting the job, without monitoring the evaluation")
	fs.Uint64Var(&checkIndex, "check-index", 0, "Register only if the job's modify index equals this value (0: the job must not exist)")
	fs.BoolVar(&verbose, "verbose", false, "Display full information (full IDs)")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <path>")
		fs.Usage()
		return 1
	}
	job, err := jf.parse(fs.Arg(0), s.Stdin)
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if output {
		out, err := indentedJobJSON(job, jf.maxRunWarnings)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error converting job: %s\n", err)
			return 1
		}
		fmt.Fprintln(s.Stdout, out)
		return 0
	}
	if _, err := validateJob(job, jf.maxRunWarnings); err != nil {
		fmt.Fprintf(s.Stderr, "Job validation errors:\n%s\n", err)
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if job.Region != nil && *job.Region != "" {
		client.SetRegion(*job.Region)
	}
	if job.Namespace != nil && *job.Namespace != "" {
		client.SetNamespace(*job.Namespace)
	}
	opts := &api.RegisterOptions{}
	if isSet(fs, "check-index") {
		opts.EnforceIndex = true
		opts.ModifyIndex = checkIndex
	}
	resp, err := registerJob(client, job, opts, jf.maxRunWarnings)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error submitting job: %s\n", err)
		return 1
	}
	if resp.Warnings != "" {
		fmt.Fprintf(s.Stdout, "Job Warnings:\n%s\n\n", resp.Warnings)
	}
	periodic := job.Periodic != nil && (job.Periodic.Enabled == nil || *job.Periodic.Enabled)
	if resp.EvalID == "" || detach || periodic || job.ParameterizedJob != nil {
		fmt.Fprintln(s.Stdout, "Job registration successful")
		if periodic {
			if next, err := nextLaunchText(job.Periodic, time.Now()); err == nil && next != "" {
				fmt.Fprintf(s.Stdout, "Approximate next launch time: %s\n", next)
			}
		}
		if resp.EvalID != "" {
			fmt.Fprintf(s.Stdout, "Evaluation ID: %s\n", resp.EvalID)
		}
		return 0
	}
	return newMonitor(client, s.Stdout, verbose).monitor(resp.EvalID)
}
