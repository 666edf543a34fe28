package apiconv

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// Convert turns a job as submitted into the internal model: Check refuses
// what nomadq would not act on, then api.Job.Canonicalize fills in Nomad's
// defaults (changing j in place) and Job maps the result. The warnings are
// Check's, for the register, plan and validate answers.
func Convert(j *api.Job) (*structs.Job, []string, error) {
	warnings, err := Check(j)
	if err != nil {
		return nil, warnings, err
	}
	j.Canonicalize()
	return Job(j), warnings, nil
}

// Warnings renders Check's warnings and the job's own advice
// (structs.Job.Warnings; j may be nil) as the text of a response's
// Warnings field: one line, or a list in Nomad's layout when there are
// several. It is "" when there is nothing to say.
func Warnings(check []string, j *structs.Job) string {
	all := slices.Clone(check)
	if j != nil {
		var me *structs.MultiError
		if err := j.Warnings(); errors.As(err, &me) {
			for _, e := range me.Errors {
				all = append(all, e.Error())
			}
		}
	}
	switch len(all) {
	case 0:
		return ""
	case 1:
		return all[0]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d warnings:\n", len(all))
	for _, w := range all {
		b.WriteString("\n* " + w)
	}
	return b.String()
}
