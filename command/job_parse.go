package command

import (
	"bytes"
	"encoding/json"
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
	json     bool
	// maxRunWarnings are the groups' max_run_duration_warning blocks of
	// the job parse read last, which the api job cannot carry.
	maxRunWarnings maxRunWarnings
}

func (f *jobFileFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.vars, "var", "Variable for the job file, as key=value (repeatable)")
	fs.Var(&f.varFiles, "var-file", "File of variable values for the job file (repeatable)")
	fs.BoolVar(&f.strict, "hcl2-strict", true, "Fail on variable values the job file does not declare")
	fs.BoolVar(&f.json, "json", false, "Read the job file as the API's JSON job, with or without an outer {\"Job\": ...} object (the output of job run -output or job inspect)")
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
	if f.json || isAPIJobJSON(body) {
		if len(f.vars) > 0 || len(f.varFiles) > 0 {
			return nil, fmt.Errorf("error parsing job file %s: -var and -var-file cannot be used with a JSON job: it has no variables", path)
		}
		job, warnings, err := decodeAPIJob(body)
		if err != nil {
			return nil, fmt.Errorf("error parsing JSON job file %s: %w", path, err)
		}
		f.maxRunWarnings = warnings
		return job, nil
	}
	res, err := jobspec.ParseResult(&jobspec.ParseConfig{
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
	f.maxRunWarnings = res.MaxRunWarnings
	return res.Job, nil
}

// isAPIJobJSON reports whether body is a job in the API's JSON shape
// rather than a job file: a JSON object whose keys are the API's ("Job",
// "ID", "TaskGroups"). Nomad's HCL in JSON syntax starts with "job",
// lower-case, and is left to the job file parser.
func isAPIJobJSON(body []byte) bool {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return false
	}
	for _, k := range []string{"Job", "ID", "TaskGroups"} {
		if _, ok := top[k]; ok {
			return true
		}
	}
	return false
}

// decodeAPIJob reads a job in the API's JSON shape, wrapped in {"Job":
// ...} or bare, as Nomad's job run -json does. A key the API's Job does
// not have is an error naming it: dropping it would run something other
// than what the file says. A group's MaxRunDurationWarning, which api.Job
// lacks, is returned beside the job.
func decodeAPIJob(body []byte) (*api.Job, maxRunWarnings, error) {
	var either struct {
		Nested *apiJobWithWarnings `json:"Job"`
		apiJobWithWarnings
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&either); err != nil {
		return nil, nil, err
	}
	if dec.More() {
		return nil, nil, fmt.Errorf("more than one JSON value: a file holds one job")
	}
	if either.Nested != nil {
		return either.Nested.split()
	}
	return either.split()
}

// validateJob checks a copy of the parsed job as the server would, so
// errors show before any request: apiconv.Check refuses the fields nomadq
// does not act on, then the server's defaults and validation run. It
// returns the warnings the server would answer with, also when it refuses
// the job.
func validateJob(job *api.Job, maxRun maxRunWarnings) (string, error) {
	cp, err := copyAPIJob(job)
	if err != nil {
		return "", err
	}
	sj, warnings, err := apiconv.Convert(cp)
	if err != nil {
		return apiconv.Warnings(warnings, nil), err
	}
	for name, w := range maxRun {
		tg := sj.LookupTaskGroup(name)
		if tg == nil {
			return "", fmt.Errorf("MaxRunDurationWarning is set for task group %q, which the job does not have", name)
		}
		tg.MaxRunDurationWarning = w.Copy()
	}
	sj.Canonicalize()
	if err := sj.Validate(); err != nil {
		return "", err
	}
	return apiconv.Warnings(warnings, sj), nil
}
