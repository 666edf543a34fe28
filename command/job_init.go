package command

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/command/asset"
)

// defaultInitName is the file "nomad job init" writes when given none.
const defaultInitName = "example.nomad.hcl"

// jobTemplatePrefix is where -template looks for job templates, in
// Nomad variables: the template is the "template" item of the variable
// nomad/job-templates/<name>.
const jobTemplatePrefix = "nomad/job-templates/"

const jobInitUsage = `
Usage: nomad job init [options] [<filename>]
Alias: nomad init

  Write an example job file to start from: a batch job with a
  max_run_duration that runs a shell command with the raw_exec driver. The
  file is example.nomad.hcl unless a filename is given; an existing file is
  never overwritten.
`

func runJobInit(args []string, s Streams) int {
	var (
		af                   apiFlags
		short, connect, list bool
		template             string
	)
	flags := newFlagSet("job init", s.Stderr, jobInitUsage)
	af.register(flags)
	flags.BoolVar(&short, "short", false, "Write a minimal job file without comments")
	flags.BoolVar(&connect, "connect", false, "Include Consul Connect integration (not supported by nomadq)")
	flags.StringVar(&template, "template", "", "Write the job template stored in the variable nomad/job-templates/<template>")
	flags.BoolVar(&list, "list-templates", false, "List the job templates stored under nomad/job-templates/")
	if err := flags.Parse(args); err != nil {
		return 1
	}
	if connect {
		fmt.Fprintln(s.Stderr, "-connect is not supported by nomadq: it has no Consul Connect integration")
		return 1
	}
	if flags.NArg() > 1 {
		fmt.Fprintln(s.Stderr, "This command takes either no arguments or one: <filename>")
		return 1
	}
	if list {
		return listJobTemplates(&af, s)
	}
	filename := defaultInitName
	if flags.NArg() == 1 {
		filename = flags.Arg(0)
	}
	if _, err := os.Stat(filename); err == nil {
		fmt.Fprintf(s.Stderr, "Job '%s' already exists\n", filename)
		return 1
	} else if !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(s.Stderr, "Failed to stat '%s': %v\n", filename, err)
		return 1
	}
	spec := asset.JobExample
	if short {
		spec = asset.JobExampleShort
	}
	if template != "" {
		src, err := readJobTemplate(&af, template)
		if err != nil {
			fmt.Fprintln(s.Stderr, err)
			return 1
		}
		fmt.Fprintf(s.Stdout, "Initializing a job template from %s\n", template)
		spec = []byte(src)
	}
	// O_EXCL: a file created since the check above is not overwritten.
	f, err := os.OpenFile(filename, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o660)
	if err == nil {
		_, err = f.Write(spec)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		fmt.Fprintf(s.Stderr, "Failed to write '%s': %v\n", filename, err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "Example job file written to %s\n", filename)
	return 0
}

// checkVariablesServed tells an agent that has no variables endpoints
// from a variable that does not exist: the official client answers both
// with "variable not found".
func checkVariablesServed(client *api.Client, flag string) error {
	var out any
	_, err := client.Raw().Query("/v1/vars?prefix="+jobTemplatePrefix, &out, nil)
	if err != nil && responseStatus(err) == http.StatusNotFound {
		return fmt.Errorf("%s is not supported by this agent: it serves no variables, where job templates are stored", flag)
	}
	return nil
}

func readJobTemplate(af *apiFlags, name string) (string, error) {
	client, err := af.client()
	if err != nil {
		return "", err
	}
	if err := checkVariablesServed(client, "-template"); err != nil {
		return "", err
	}
	v, _, err := client.Variables().Read(jobTemplatePrefix+name, nil)
	if err != nil {
		if errors.Is(err, api.ErrVariablePathNotFound) {
			return "", fmt.Errorf("Job template %q not found: no variable %s%s", name, jobTemplatePrefix, name)
		}
		return "", fmt.Errorf("Error retrieving variable: %s", err)
	}
	src, ok := v.Items["template"]
	if !ok {
		return "", fmt.Errorf("Job template %q is malformed: the variable %s%s has no \"template\" item", name, jobTemplatePrefix, name)
	}
	return src, nil
}

func listJobTemplates(af *apiFlags, s Streams) int {
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if err := checkVariablesServed(client, "-list-templates"); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	vars, _, err := client.Variables().PrefixList(jobTemplatePrefix, nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error retrieving job templates from the server; unable to read variables at path %s: %s\n", jobTemplatePrefix, err)
		return 1
	}
	if len(vars) == 0 {
		fmt.Fprintf(s.Stderr, "No variables in %s\n", strings.TrimSuffix(jobTemplatePrefix, "/"))
		return 1
	}
	sort.Slice(vars, func(i, j int) bool { return vars[i].Path < vars[j].Path })
	fmt.Fprintln(s.Stdout, "Use nomad job init -template=<template> with any of the following:")
	for _, v := range vars {
		fmt.Fprintf(s.Stdout, "  %s\n", strings.TrimPrefix(v.Path, jobTemplatePrefix))
	}
	return 0
}
