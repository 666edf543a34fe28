package command

import (
	"fmt"
	"net/url"
)

const queueControlUsage = `
Usage: nomad queue %[1]s [options] <job>

  %[2]s

  The job must be waiting in the batch queue (not placing or done); the
  namespace is -namespace's (or NOMAD_NAMESPACE's, default "default"). A
  hold of a held job and a release of a job that is not held change
  nothing and are refused with exit code 1, naming the job's state.
`

// queueControl returns the command for one operator control of a queued
// job: hold (keep its place, skip it), release (let a held job go) or top
// (move it to the head of its namespace).
func queueControl(op, help string) func([]string, Streams) int {
	return func(args []string, s Streams) int {
		var af apiFlags
		fs := newFlagSet("queue "+op, s.Stderr, fmt.Sprintf(queueControlUsage, op, help))
		af.register(fs)
		client, ok := parseOneArg(fs, &af, args, "<job>", s)
		if !ok {
			return 1
		}
		job := fs.Arg(0)
		var out struct{ Index uint64 }
		if _, err := client.Raw().Write("/v1/queue/job/"+url.PathEscape(job)+"/"+op, nil, &out, nil); err != nil {
			fmt.Fprintf(s.Stderr, "Error: %s\n", err)
			return 1
		}
		past := map[string]string{"hold": "held", "release": "released", "top": "moved to the head of its namespace"}[op]
		fmt.Fprintf(s.Stdout, "Job %q %s in the batch queue\n", job, past)
		return 0
	}
}
