package command

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadq/nomadq/apiconv"
	"github.com/nomadq/nomadq/jobspec"
)

// jobFileFlags are the flags of every command that reads a job file.
type jobFileFlags struct {
	vars     stringList
	varFiles stringList
	strict   bool
}

func (f *jobFileFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.vars, "var", "Variable for the job file, as key=value (repeatable)")
	fs.Var(&f.varFiles, "var-file", "File of variable values for the job file (repeatable)")
	fs.BoolVar(&f.strict, "hcl2-strict", true, "Fail on variable values the job file does not declare")
}

// parse reads the job file at path ("-" for standard input) into an api
// job, exactly as written (not canonicalized).
func (f *jobFileFlags) parse(path string, stdin io.Reader) (*api.Job, error) {
	var body []byte
	var err error
	if path == "-" {
		body, err = io.ReadAll(stdin)
		path = "<stdin>"
	} else {
		body, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("error reading job file: %w", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, fmt.Errorf("error parsing job file %s: the file is empty", path)
	}
	job, err := jobspec.ParseWithConfig(&jobspec.ParseConfig{
		Path:     path,
		Body:     body,
		ArgVars:  f.vars,
		VarFiles: f.varFiles,
		Envs:     Env(),
		AllowFS:  true,
		Strict:   f.strict,
	})
	if err != nil {
		return nil, fmt.Errorf("error parsing job file %s:\n%w", path, err)
	}
	return job, nil
}

// validateJob checks a copy of the parsed job as the server would, so
// errors show before any request: apiconv.Check refuses the fields nomadq
// does not act on, then the server's defaults and validation run. It
// returns the warnings the server would answer with, also when it refuses
// the job.
func validateJob(job *api.Job) (string, error) {
	cp, err := copyAPIJob(job)
	if err != nil {
		return "", err
	}
	sj, warnings, err := apiconv.Convert(cp)
	if err != nil {
		return apiconv.Warnings(warnings, nil), err
	}
	sj.Canonicalize()
	if err := sj.Validate(); err != nil {
		return "", err
	}
	return apiconv.Warnings(warnings, sj), nil
}
