package taskrunner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/structs"
)

func TestWriteDispatchPayload(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		payload []byte
		want    string // path under local/; "" for no file
		wantErr bool
	}{
		{name: "payload file", file: "input.json", payload: []byte(`{"n":1}`), want: "input.json"},
		{name: "nested", file: "in/data.txt", payload: []byte("x"), want: "in/data.txt"},
		{name: "empty payload still writes the file", file: "empty", payload: nil, want: "empty"},
		{name: "no block", file: "", payload: []byte("x")},
		{name: "escape", file: "../../etc/passwd", payload: []byte("x"), wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := allocdir.New(t.TempDir(), "a1")
			must.NoError(t, dir.Build())
			must.NoError(t, dir.BuildTask("main"))
			task := &structs.Task{Name: "main"}
			if tc.file != "" {
				task.DispatchPayload = &structs.DispatchPayloadConfig{File: tc.file}
			}
			alloc := &structs.Allocation{Job: &structs.Job{Payload: tc.payload}}
			err := writeDispatchPayload(dir, task, alloc)
			if tc.wantErr {
				must.Error(t, err)
				return
			}
			must.NoError(t, err)
			if tc.want == "" {
				entries, err := os.ReadDir(dir.LocalDir("main"))
				must.NoError(t, err)
				must.Len(t, 0, entries)
				return
			}
			got, err := os.ReadFile(filepath.Join(dir.LocalDir("main"), tc.want))
			must.NoError(t, err)
			must.Eq(t, string(tc.payload), string(got))
		})
	}
}
