package structs

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestFilter_KeepMatching(t *testing.T) {
	jobs := []*Job{
		{ID: "a", Type: JobTypeBatch, Meta: map[string]string{"owner": "x"}},
		{ID: "b", Type: JobTypeService},
		{ID: "c", Type: JobTypeBatch, TaskGroups: []*TaskGroup{{Name: "g"}}},
	}
	self := func(j *Job) any { return j }
	cases := []struct {
		expr   string
		want   []string
		errMsg string
	}{
		{"", []string{"a", "b", "c"}, ""},
		{`Type == "batch"`, []string{"a", "c"}, ""},
		{`"owner" in Meta or TaskGroups is not empty`, []string{"a", "c"}, ""},
		{`Meta.owner == "x"`, []string{"a"}, ""},
		{`ID matches "^[bc]$" and not (Type == "service")`, []string{"c"}, ""},
		{`Nope == "x"`, nil, `Invalid filter expression "Nope == \"x\"": error finding value in datum: /Nope`},
		{`ID ==`, nil, `Invalid filter expression: 1:6`},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			f, err := NewFilter(tc.expr)
			if err == nil {
				var kept []*Job
				kept, err = KeepMatching(f, jobs, self)
				if err == nil {
					ids := []string{}
					for _, j := range kept {
						ids = append(ids, j.ID)
					}
					must.Eq(t, tc.want, ids)
				}
			}
			if tc.errMsg == "" {
				must.NoError(t, err)
			} else {
				must.ErrorContains(t, err, tc.errMsg)
			}
		})
	}
}
