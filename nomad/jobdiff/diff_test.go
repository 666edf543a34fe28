package jobdiff

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func job() *structs.Job {
	return &structs.Job{
		ID:          "web",
		Name:        "web",
		Namespace:   structs.DefaultNamespace,
		Type:        structs.JobTypeBatch,
		Priority:    50,
		Datacenters: []string{"dc1"},
		TaskGroups: []*structs.TaskGroup{{
			Name:  "work",
			Count: 1,
			Tasks: []*structs.Task{{
				Name:   "main",
				Driver: "mock_driver",
				Config: map[string]any{"run_for": "1s"},
			}},
		}},
	}
}

func TestDiff(t *testing.T) {
	cases := []struct {
		name  string
		old   *structs.Job
		edit  func(*structs.Job)
		check func(t *testing.T, d *structs.JobDiff)
	}{
		{
			name: "new job is added with its groups",
			old:  nil,
			check: func(t *testing.T, d *structs.JobDiff) {
				must.Eq(t, structs.DiffTypeAdded, d.Type)
				must.SliceLen(t, 1, d.TaskGroups)
				must.Eq(t, structs.DiffTypeAdded, d.TaskGroups[0].Type)
				must.Eq(t, "work", d.TaskGroups[0].Name)
				must.Eq(t, []string{"forces create"}, d.TaskGroups[0].Tasks[0].Annotations)
			},
		},
		{
			name: "an empty payload is no change",
			old:  job(),
			edit: func(j *structs.Job) { j.Payload = []byte{} },
			check: func(t *testing.T, d *structs.JobDiff) {
				must.Eq(t, structs.DiffTypeNone, d.Type)
				must.SliceEmpty(t, d.Objects)
			},
		},
		{
			name: "new job with an empty payload has no payload object",
			old:  nil,
			edit: func(j *structs.Job) { j.Payload = []byte{} },
			check: func(t *testing.T, d *structs.JobDiff) {
				for _, o := range d.Objects {
					must.NotEq(t, "Payload", o.Name)
				}
			},
		},
		{
			name: "fields the server sets are not a change",
			old:  job(),
			edit: func(j *structs.Job) { j.Version, j.ModifyIndex, j.Status = 3, 40, structs.JobStatusRunning },
			check: func(t *testing.T, d *structs.JobDiff) {
				must.Eq(t, structs.DiffTypeNone, d.Type)
				must.SliceEmpty(t, d.Fields)
				must.SliceEmpty(t, d.TaskGroups)
			},
		},
		{
			name: "edited field lists old and new",
			old:  job(),
			edit: func(j *structs.Job) { j.Priority = 70 },
			check: func(t *testing.T, d *structs.JobDiff) {
				must.Eq(t, structs.DiffTypeEdited, d.Type)
				must.Eq(t, []*structs.FieldDiff{{Type: structs.DiffTypeEdited, Name: "Priority", Old: "50", New: "70"}}, d.Fields)
			},
		},
		{
			name: "edited task config forces create/destroy",
			old:  job(),
			edit: func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Config["run_for"] = "5s" },
			check: func(t *testing.T, d *structs.JobDiff) {
				must.SliceLen(t, 1, d.TaskGroups)
				must.SliceLen(t, 1, d.TaskGroups[0].Tasks)
				task := d.TaskGroups[0].Tasks[0]
				must.Eq(t, structs.DiffTypeEdited, task.Type)
				must.Eq(t, []string{"forces create/destroy update"}, task.Annotations)
				must.SliceLen(t, 1, task.Objects)
				must.Eq(t, []*structs.FieldDiff{{Type: structs.DiffTypeEdited, Name: "Config.run_for", Old: "1s", New: "5s"}}, task.Objects[0].Fields)
			},
		},
		{
			name: "removed group is deleted",
			old:  job(),
			edit: func(j *structs.Job) { j.TaskGroups = nil },
			check: func(t *testing.T, d *structs.JobDiff) {
				must.SliceLen(t, 1, d.TaskGroups)
				must.Eq(t, structs.DiffTypeDeleted, d.TaskGroups[0].Type)
				must.Eq(t, "work", d.TaskGroups[0].Name)
				must.Eq(t, []string{"forces destroy"}, d.TaskGroups[0].Tasks[0].Annotations)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nj := job()
			if tc.edit != nil {
				tc.edit(nj)
			}
			tc.check(t, Diff(tc.old, nj))
		})
	}
}
