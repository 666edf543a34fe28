package command

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestScaleGroup(t *testing.T) {
	one := map[string]api.TaskGroupScaleStatus{"web": {}}
	two := map[string]api.TaskGroupScaleStatus{"web": {}, "db": {}}
	cases := []struct {
		name    string
		groups  map[string]api.TaskGroupScaleStatus
		group   string
		want    string
		wantErr string
	}{
		{"only group by default", one, "", "web", ""},
		{"named group", two, "db", "db", ""},
		{"several groups need a name", two, "", "", "Group name required"},
		{"unknown group", one, "cache", "", "Group cache not found within job"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scaleGroup(tc.groups, tc.group)
			if tc.wantErr != "" {
				must.EqError(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
}

func TestSnapshotCreated(t *testing.T) {
	cases := []struct {
		id   string
		want string
	}{
		{"2-17-0", "N/A"},
		{"2-17", ""},
		{"2-17-soon", ""},
	}
	for _, tc := range cases {
		must.Eq(t, tc.want, snapshotCreated(tc.id), must.Sprint(tc.id))
	}
	must.Eq(t, time.UnixMilli(1796306338059).Format(time.RFC3339), snapshotCreated("2-17-1796306338059"))
}
