package jobspec

import (
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/shoenig/test/must"
)

func TestParse_Bad(t *testing.T) {
	cases := []struct {
		name string
		file string
		mod  func(*ParseConfig)
		err  string
	}{
		{
			name: "syntax error",
			file: "syntax_error.nomad.hcl",
			err:  "testdata/bad/syntax_error.nomad.hcl:3,13-4,1: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
		},
		{
			name: "unknown block",
			file: "unknown_block.nomad.hcl",
			err:  `testdata/bad/unknown_block.nomad.hcl:3,5-9: Unsupported block type; Blocks of type "taks" are not expected here. Did you mean "task"?`,
		},
		{
			name: "unknown attribute",
			file: "unknown_attribute.nomad.hcl",
			err:  `testdata/bad/unknown_attribute.nomad.hcl:3,5-16: Unsupported argument; An argument named "max_runtime" is not expected here.`,
		},
		{
			name: "wrong type for count",
			file: "wrong_type.nomad.hcl",
			err:  "testdata/bad/wrong_type.nomad.hcl:3,13-19: Unsuitable value type; count: a number is required",
		},
		{
			name: "fractional count",
			file: "fractional_count.nomad.hcl",
			err:  "testdata/bad/fractional_count.nomad.hcl:3,13-16: Unsuitable value type; count: value must be a whole number, between -9223372036854775808 and 9223372036854775807",
		},
		{
			name: "meta that is not a map",
			file: "meta_not_map.nomad.hcl",
			err:  "testdata/bad/meta_not_map.nomad.hcl:2,10-20: Unsuitable value type; meta: map of string required",
		},
		{
			name: "bad duration string",
			file: "bad_duration.nomad.hcl",
			err:  `testdata/bad/bad_duration.nomad.hcl:5,24-29: Invalid duration; max_run_duration: time: invalid duration "ten"`,
		},
		{
			name: "max_run_duration on a service job",
			file: "mrd_service.nomad.hcl",
			err:  `testdata/bad/mrd_service.nomad.hcl:6,24-28: Invalid max_run_duration; Task group "g": max_run_duration is only allowed for batch and sysbatch jobs, not service jobs`,
		},
		{
			name: "max_run_duration 0s",
			file: "mrd_zero.nomad.hcl",
			err:  `testdata/bad/mrd_zero.nomad.hcl:5,24-28: Invalid max_run_duration; Task group "g": max_run_duration must be greater than zero, got 0s`,
		},
		{
			name: "duration in words",
			file: "duration_words.nomad.hcl",
			err:  `testdata/bad/duration_words.nomad.hcl:5,17-30: Invalid duration; delay: time: invalid duration "ten minutes"`,
		},
		{
			name: "number as string without unit",
			file: "duration_unitless.nomad.hcl",
			err:  `testdata/bad/duration_unitless.nomad.hcl:4,22-27: Invalid duration; kill_timeout: time: missing unit in duration "300"`,
		},
		{
			name: "bool duration",
			file: "duration_bool.nomad.hcl",
			err:  `testdata/bad/duration_bool.nomad.hcl:3,22-26: Invalid duration; shutdown_delay: a duration string such as "10s" or a number of nanoseconds is required, got bool`,
		},
		{
			name: "bad duration in HCL-JSON",
			file: "json_bad_duration.nomad.json",
			err:  `testdata/bad/json_bad_duration.nomad.json:6,31-40: Invalid duration; max_run_duration: time: invalid duration "forever"`,
		},
		{
			name: "undefined variable",
			file: "undefined_variable.nomad.hcl",
			err:  `testdata/bad/undefined_variable.nomad.hcl:9,20-26: Undefined variable; var.imgae: no variable "imgae" is declared`,
		},
		{
			name: "unset variable",
			file: "unset_variable.nomad.hcl",
			err:  `testdata/bad/unset_variable.nomad.hcl:1,1-18: Unset variable "region"; variable "region" has no default; give it a value with -var, -var-file or NOMAD_VAR_region`,
		},
		{
			name: "variable validation failure",
			file: "validation_failure.nomad.hcl",
			err:  `testdata/bad/validation_failure.nomad.hcl:6,21-34: Invalid value for variable; variable "count": count must be positive`,
		},
		{
			name: "undeclared -var in strict mode",
			file: "declared.nomad.hcl",
			mod:  func(c *ParseConfig) { c.ArgVars = []string{"nope=1"} },
			err:  `-var:1,1-7: Undeclared variable; a value for "nope" was given with -var, but the job declares no variable "nope"`,
		},
		{
			name: "undeclared -var-file value in strict mode",
			file: "declared.nomad.hcl",
			mod:  func(c *ParseConfig) { c.VarFiles = []string{"testdata/varfiles/undeclared.hcl"} },
			err:  `testdata/varfiles/undeclared.hcl:2,1-5: Undeclared variable; a value for "nope" was given with a variable file, but the job declares no variable "nope"`,
		},
		{
			name: "bad -var syntax",
			file: "declared.nomad.hcl",
			mod:  func(c *ParseConfig) { c.ArgVars = []string{"image"} },
			err:  `-var:1,1-6: Invalid -var option; "image" must be a variable name and a value separated by an equals sign, like -var "key=value"`,
		},
		{
			name: "-var with an empty name",
			file: "declared.nomad.hcl",
			mod:  func(c *ParseConfig) { c.ArgVars = []string{"=x"} },
			err:  `-var:1,1-3: Invalid -var option; "=x" must be a variable name and a value separated by an equals sign, like -var "key=value"`,
		},
		{
			name: "-var value of the wrong type",
			file: "declared.nomad.hcl",
			mod:  func(c *ParseConfig) { c.ArgVars = []string{"replicas=abc"} },
			err:  `-var:1,1-13: Invalid value for variable; variable "replicas": a number is required`,
		},
		{
			name: "-var-file value of the wrong type",
			file: "declared.nomad.hcl",
			mod:  func(c *ParseConfig) { c.VarFiles = []string{"testdata/varfiles/bad_type.hcl"} },
			err:  `testdata/varfiles/bad_type.hcl:1,12-18: Invalid value for variable; variable "replicas": a number is required`,
		},
		{
			name: "missing -var-file",
			file: "declared.nomad.hcl",
			mod:  func(c *ParseConfig) { c.VarFiles = []string{"testdata/varfiles/missing.hcl"} },
			err:  `testdata/varfiles/missing.hcl:1,1-1: Failed to read variable file; open testdata/varfiles/missing.hcl: no such file or directory`,
		},
		{
			name: "NOMAD_VAR_ value of the wrong type",
			file: "declared.nomad.hcl",
			mod:  func(c *ParseConfig) { c.Envs = []string{"NOMAD_VAR_replicas=ten"} },
			err:  `NOMAD_VAR_replicas:1,1-4: Invalid value for variable; variable "replicas": a number is required`,
		},
		{
			name: "two job blocks",
			file: "two_jobs.nomad.hcl",
			err:  "testdata/bad/two_jobs.nomad.hcl:4,1-8: Duplicate job block; A job file must contain exactly one job block; another was defined at testdata/bad/two_jobs.nomad.hcl:1,1-8.",
		},
		{
			name: "no job block",
			file: "no_job.nomad.hcl",
			err:  "testdata/bad/no_job.nomad.hcl:1,1-1: Missing job block; A job file must contain exactly one job block.",
		},
		{
			name: "job without id",
			file: "missing_label.nomad.hcl",
			err:  "testdata/bad/missing_label.nomad.hcl:1,5-6: Missing id for job; All job blocks must have 1 labels (id).",
		},
		{
			name: "bad function call",
			file: "bad_function.nomad.hcl",
			err:  `testdata/bad/bad_function.nomad.hcl:3,23-24: Too many function arguments; Function "upper" expects only 1 argument(s).`,
		},
		{
			name: "filesystem function without AllowFS",
			file: "unknown_function.nomad.hcl",
			mod:  func(c *ParseConfig) { c.AllowFS = false },
			err:  `testdata/bad/unknown_function.nomad.hcl:3,12-16: Call to unknown function; There is no function named "file". Did you mean "title"?`,
		},
		{
			name: "HCL-JSON syntax error",
			file: "json_syntax.nomad.json",
			err:  "testdata/bad/json_syntax.nomad.json:4,22-23: Trailing comma in object; JSON does not permit a trailing comma after the final property in an object.",
		},
		{
			name: "duplicate single block",
			file: "duplicate_block.nomad.hcl",
			err:  "testdata/bad/duplicate_block.nomad.hcl:6,5-12: Duplicate restart block; Only one restart block is allowed here; another was defined at testdata/bad/duplicate_block.nomad.hcl:3,5-12.",
		},
		{
			name: "two volume blocks with one label",
			file: "duplicate_volume.nomad.hcl",
			err:  `testdata/bad/duplicate_volume.nomad.hcl:7,5-18: Duplicate volume block "data"; Only one volume block may be labeled "data"; another was defined at testdata/bad/duplicate_volume.nomad.hcl:3,5-18.`,
		},
		{
			name: "config argument and block of one name",
			file: "config_attr_and_block.nomad.hcl",
			err:  `testdata/bad/config_attr_and_block.nomad.hcl:8,9-14: Both an argument and a block named "mount"; "mount" is set as an argument and as a block; write it one way.`,
		},
		{
			name: "operator and shorthand together",
			file: "conflicting_operators.nomad.hcl",
			err:  "testdata/bad/conflicting_operators.nomad.hcl:5,5-12: Conflicting operators; version: only one of operator or an operator shorthand may be set; operator is set at testdata/bad/conflicting_operators.nomad.hcl:4,5-13",
		},
		{
			name: "lifecycle without hook",
			file: "missing_hook.nomad.hcl",
			err:  `testdata/bad/missing_hook.nomad.hcl:4,17-17: Missing required argument; The argument "hook" is required, but no definition was found.`,
		},
		{
			name: "locals reference cycle",
			file: "locals_cycle.nomad.hcl",
			err:  `testdata/bad/locals_cycle.nomad.hcl:2,12-14: Unresolvable local value; local.b: local "b" cannot be evaluated; its references form a cycle, and 1 other diagnostic(s)`,
		},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job, err := parseTestFile(filepath.Join("testdata", "bad", tc.file), tc.mod)
			must.Nil(t, job)
			must.EqError(t, err, tc.err)
			// Errors from files keep their positions for tools.
			var diags hcl.Diagnostics
			must.ErrorAs[hcl.Diagnostics](t, err, &diags)
			must.NotNil(t, diags[0].Subject)
		})
	}
}
