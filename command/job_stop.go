package command

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/hashicorp/nomad/api"
)

const jobStopUsage = `
Usage: nomad job stop [options] <job>

  Stop an existing job. The job is marked stopped and its allocations are
  stopped; with -purge it is also removed from the state store.
`

func runJobStop(args []string, s Streams) int {
	var (
		af      apiFlags
		purge   bool
		yes     bool
		detach  bool
		verbose bool
		noDelay bool
	)
	fs := newFlagSet("job stop", s.Stderr, jobStopUsage)
	af.register(fs)
	fs.BoolVar(&purge, "purge", false, "Purge the job from the system after stopping it")
	fs.BoolVar(&yes, "yes", false, "Automatic yes to prompts")
	fs.BoolVar(&detach, "detach", false, "Return immediately instead of monitoring the stop evaluation")
	fs.BoolVar(&verbose, "verbose", false, "Display full information")
	fs.BoolVar(&noDelay, "no-shutdown-delay", false, "Ignore the group and task shutdown_delay")
	client, ok := parseOneArg(fs, &af, args, "<job>", s)
	if !ok {
		return 1
	}
	prefix := fs.Arg(0)
	stub, err := resolveJob(client, prefix)
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	q := &api.QueryOptions{Namespace: stub.JobSummary.Namespace}
	job, _, err := client.Jobs().Info(stub.ID, q)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error deregistering job: %s\n", err)
		return 1
	}
	if prefix != *job.ID && !yes {
		fmt.Fprintf(s.Stdout, "Are you sure you want to stop job %q? [y/N] ", *job.ID)
		answer, _ := bufio.NewReader(s.Stdin).ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
		default:
			fmt.Fprintln(s.Stdout, "")
			fmt.Fprintln(s.Stdout, errAborted.Error())
			return 0
		}
	}
	evalID, _, err := client.Jobs().DeregisterOpts(*job.ID, &api.DeregisterOptions{Purge: purge, NoShutdownDelay: noDelay}, &api.WriteOptions{Namespace: *job.Namespace})
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error deregistering job: %s\n", err)
		return 1
	}
	if evalID == "" {
		return 0
	}
	if detach {
		fmt.Fprintln(s.Stdout, evalID)
		return 0
	}
	return newMonitor(client, s.Stdout, verbose).monitor(evalID)
}

const jobInspectUsage = `
Usage: nomad job inspect [options] <job>

  Inspect is used to see the specification of a submitted job.
`

func runJobInspect(args []string, s Streams) int {
	var (
		af      apiFlags
		asJSON  bool
		tmpl    string
		version int64
	)
	fs := newFlagSet("job inspect", s.Stderr, jobInspectUsage)
	af.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the job in its JSON format (the default)")
	fs.StringVar(&tmpl, "t", "", "Format and display the job using a Go template")
	fs.Int64Var(&version, "version", -1, "Display the job at the given version")
	hcl := fs.Bool("hcl", false, "Display the original job submission (not supported by nomadq)")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if *hcl {
		fmt.Fprintln(s.Stderr, "-hcl is not supported by nomadq: the CLI does not send the job file's source with a registration; use -json")
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if fs.NArg() == 0 {
		jobs, _, err := client.Jobs().List(nil)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error querying jobs: %s\n", err)
			return 1
		}
		if len(jobs) == 0 {
			fmt.Fprintln(s.Stdout, "No running jobs")
		} else {
			fmt.Fprintln(s.Stdout, formatJobList(jobs))
		}
		return 0
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <job>")
		return 1
	}
	stub, err := resolveJob(client, fs.Arg(0))
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	q := &api.QueryOptions{Namespace: stub.JobSummary.Namespace}
	var job *api.Job
	if version >= 0 {
		versions, _, _, err := client.Jobs().Versions(stub.ID, false, q)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error inspecting job: %s\n", err)
			return 1
		}
		for _, v := range versions {
			if v.Version != nil && int64(*v.Version) == version {
				job = v
			}
		}
		if job == nil {
			fmt.Fprintf(s.Stderr, "Error inspecting job: job %q has no version %d\n", stub.ID, version)
			return 1
		}
	} else {
		job, _, err = client.Jobs().Info(stub.ID, q)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error inspecting job: %s\n", err)
			return 1
		}
	}
	if tmpl != "" {
		_, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, job)
		return code
	}
	// api.Job drops the groups' max_run_duration_warning: read it too.
	warnings, err := storedMaxRunWarnings(client, stub.ID, version, q)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error inspecting job: %s\n", err)
		return 1
	}
	buf, err := indentedJobJSON(job, warnings)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error formatting the data: %s\n", err)
		return 1
	}
	fmt.Fprintln(s.Stdout, buf)
	return 0
}
