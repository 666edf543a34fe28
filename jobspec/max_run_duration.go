package jobspec

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadq/nomadq/structs"
)

// checkMaxRunDuration applies the server's max_run_duration rule (batch and
// sysbatch only, greater than zero) while the file's positions are still
// known, so the error points at the attribute instead of arriving later
// from the server without a position. Groups made by dynamic blocks are
// left to the server's validation.
func checkMaxRunDuration(block *hcl.Block, job *api.Job) hcl.Diagnostics {
	jobType := structs.JobTypeService
	if job.Type != nil && *job.Type != "" {
		jobType = *job.Type
	}
	groups, _, _ := block.Body.PartialContent(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{{Type: "group", LabelNames: []string{"name"}}},
	})
	var diags hcl.Diagnostics
	for _, g := range groups.Blocks {
		name := g.Labels[0]
		tg := findGroup(job, name)
		if tg == nil || tg.MaxRunDuration == nil {
			continue
		}
		attrs, _, _ := g.Body.PartialContent(&hcl.BodySchema{
			Attributes: []hcl.AttributeSchema{{Name: "max_run_duration"}},
		})
		attr := attrs.Attributes["max_run_duration"]
		if attr == nil {
			continue
		}
		if err := structs.ValidateMaxRunDuration(jobType, *tg.MaxRunDuration); err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid max_run_duration",
				Detail:   fmt.Sprintf("Task group %q: %s", name, err),
				Subject:  attr.Expr.Range().Ptr(),
			})
		}
	}
	return diags
}

func findGroup(job *api.Job, name string) *api.TaskGroup {
	for _, tg := range job.TaskGroups {
		if tg.Name != nil && *tg.Name == name {
			return tg
		}
	}
	return nil
}

// explainMaxRunWarning says, on the unsupported-block error for a group's
// max_run_duration_warning, where the warning can be set today: the api
// module's TaskGroup has no such field, so a job file's block could not
// reach the servers through `nomad job run` and is refused instead.
func explainMaxRunWarning(diags hcl.Diagnostics) hcl.Diagnostics {
	for _, d := range diags {
		if d.Summary == "Unsupported block type" && strings.Contains(d.Detail, `"max_run_duration_warning"`) {
			d.Detail = `A max_run_duration_warning block is not read from job files yet: set TaskGroups[].MaxRunDurationWarning {"Before": nanoseconds, "Signal": "SIGUSR1"} in the job's JSON and register it with PUT /v1/jobs.`
		}
	}
	return diags
}
