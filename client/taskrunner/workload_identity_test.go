package taskrunner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/structs"
)

func TestExposeWorkloadIdentity(t *testing.T) {
	cases := []struct {
		name     string
		identity *structs.WorkloadIdentity
		signed   map[string]string
		wantEnv  bool
		wantFile bool
		wantErr  string
	}{
		{name: "no block", signed: map[string]string{"main": "tok"}},
		{name: "block with neither", identity: &structs.WorkloadIdentity{}, signed: map[string]string{"main": "tok"}},
		{name: "env", identity: &structs.WorkloadIdentity{Env: true}, signed: map[string]string{"main": "tok"}, wantEnv: true},
		{name: "file", identity: &structs.WorkloadIdentity{File: true}, signed: map[string]string{"main": "tok"}, wantFile: true},
		{name: "both", identity: &structs.WorkloadIdentity{Env: true, File: true}, signed: map[string]string{"main": "tok"}, wantEnv: true, wantFile: true},
		{name: "nothing signed for the task", identity: &structs.WorkloadIdentity{Env: true}, signed: map[string]string{"other": "tok"},
			wantErr: `carries no signed identity for task "main"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := allocdir.New(t.TempDir(), "a1")
			must.NoError(t, dir.Build())
			must.NoError(t, dir.BuildTask("main"))
			task := &structs.Task{Name: "main", Identity: tc.identity}
			env := map[string]string{}
			err := exposeWorkloadIdentity(dir, task, &structs.Allocation{ID: "a1", SignedIdentities: tc.signed}, env)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			if tc.wantEnv {
				must.Eq(t, "tok", env["NOMAD_TOKEN"])
			} else {
				must.MapNotContainsKey(t, env, "NOMAD_TOKEN")
			}
			path := filepath.Join(dir.SecretsDir("main"), "nomad_token")
			got, err := os.ReadFile(path)
			if !tc.wantFile {
				must.True(t, os.IsNotExist(err))
				return
			}
			must.NoError(t, err)
			must.Eq(t, "tok", string(got))
			info, err := os.Stat(path)
			must.NoError(t, err)
			must.Eq(t, os.FileMode(0o600), info.Mode().Perm())
		})
	}
}
