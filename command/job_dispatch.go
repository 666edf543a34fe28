package command

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hashicorp/nomad/api"
)

const jobDispatchUsage = `
Usage: nomad job dispatch [options] <parameterized job> [input source]

  Dispatch creates an instance of a parameterized job. A data payload to the
  dispatched instance can be provided via stdin by using "-" or by
  specifying a path to a file. Metadata can be supplied by using the meta
  flag one or more times.

  The payload is limited to 16 KiB. Unless -detach is given, the command
  monitors the evaluation of the dispatched job.
`

func runJobDispatch(args []string, s Streams) int {
	var (
		af      apiFlags
		meta    stringList
		token   string
		prefix  string
		detach  bool
		verbose bool
	)
	fs := newFlagSet("job dispatch", s.Stderr, jobDispatchUsage)
	af.register(fs)
	fs.Var(&meta, "meta", "Meta key=value pair for the dispatched job; can be given more than once")
	fs.StringVar(&token, "idempotency-token", "", "A token that makes repeated dispatches return the job the first one created")
	fs.StringVar(&prefix, "id-prefix-template", "", "Accepted for compatibility; nomadq does not use it")
	fs.BoolVar(&detach, "detach", false, "Return immediately instead of monitoring the evaluation")
	fs.BoolVar(&verbose, "verbose", false, "Display full information")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(s.Stderr, "This command takes one or two arguments: <parameterized job> [input source]")
		return 1
	}
	metaMap := make(map[string]string, len(meta))
	for _, kv := range meta {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			fmt.Fprintf(s.Stderr, "Invalid -meta %q: want key=value\n", kv)
			return 1
		}
		metaMap[k] = v
	}
	var payload []byte
	if fs.NArg() == 2 {
		var err error
		if src := fs.Arg(1); src == "-" {
			payload, err = io.ReadAll(s.Stdin)
		} else {
			payload, err = os.ReadFile(src)
		}
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error reading input data: %v\n", err)
			return 1
		}
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	resp, _, err := client.Jobs().Dispatch(fs.Arg(0), metaMap, payload, prefix, &api.WriteOptions{IdempotencyToken: token})
	if err != nil {
		fmt.Fprintf(s.Stderr, "Failed to dispatch job: %s\n", err)
		return 1
	}
	rows := []string{"Dispatched Job ID|" + resp.DispatchedJobID}
	if resp.EvalID != "" {
		rows = append(rows, "Evaluation ID|"+shortID(resp.EvalID, verbose))
	}
	fmt.Fprintln(s.Stdout, formatKV(rows))
	if detach || resp.EvalID == "" {
		return 0
	}
	fmt.Fprintln(s.Stdout, "")
	return newMonitor(client, s.Stdout, verbose).monitor(resp.EvalID)
}
