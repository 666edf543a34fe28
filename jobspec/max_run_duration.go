package jobspec

import (
	"fmt"

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
