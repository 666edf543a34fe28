package command

import (
	"encoding/json"
	"fmt"

	"github.com/hashicorp/nomad/api"
)

const jobValidateUsage = `
Usage: nomad job validate [options] <path>

  Checks that the job specification at <path> ("-" reads standard input)
  parses and passes the server's validation rules, without a server.
`

func runJobValidate(args []string, s Streams) int {
	var jf jobFileFlags
	fs := newFlagSet("job validate", s.Stderr, jobValidateUsage)
	jf.register(fs)
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
	warnings, err := validateJob(job, jf.maxRunWarnings)
	if warnings != "" {
		fmt.Fprintf(s.Stdout, "Job Warnings:\n%s\n\n", warnings)
	}
	if err != nil {
		fmt.Fprintf(s.Stderr, "Job validation errors:\n%s\n", err)
		return 1
	}
	fmt.Fprintln(s.Stdout, "Job validation successful")
	return 0
}

// copyAPIJob deep-copies a parsed job so canonicalizing it for validation
// leaves the caller's job as written.
func copyAPIJob(job *api.Job) (*api.Job, error) {
	buf, err := json.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("error copying job: %w", err)
	}
	var cp api.Job
	if err := json.Unmarshal(buf, &cp); err != nil {
		return nil, fmt.Errorf("error copying job: %w", err)
	}
	return &cp, nil
}
