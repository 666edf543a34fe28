package fuzzpath

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestSet(t *testing.T) {
	m := map[string]any{
		"Job": map[string]any{
			"Name":       "web",
			"TaskGroups": []any{map[string]any{"Count": 1}, nil},
		},
	}
	Set(m, "Job.TaskGroups.0.Count", 3)
	Set(m, "Job.TaskGroups.1.Name", "made") // a nil element becomes a map
	Set(m, "Job.Meta.owner", "ops")         // a missing map is made
	Set(m, "Job.TaskGroups.7.Count", 9)     // out of range: left alone
	Set(m, "Job.TaskGroups.x.Count", 9)     // not an index: left alone
	Set(m, "Job.Name.inner", "no")          // through a string: left alone
	must.Eq(t, map[string]any{
		"Job": map[string]any{
			"Name":       "web",
			"TaskGroups": []any{map[string]any{"Count": 3}, map[string]any{"Name": "made"}},
			"Meta":       map[string]any{"owner": "ops"},
		},
	}, m)
}
