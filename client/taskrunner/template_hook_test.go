package taskrunner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// fakeVariables is a VariableSource over variables keyed by
// "namespace/path", with one index for all of them; blocking queries wait
// for a set.
type fakeVariables struct {
	mu      sync.Mutex
	index   uint64
	vars    map[string]map[string]string
	changed chan struct{}
}

func newFakeVariables(vars map[string]map[string]string) *fakeVariables {
	return &fakeVariables{index: 1, vars: vars, changed: make(chan struct{})}
}

func (f *fakeVariables) set(key string, items map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.index++
	f.vars[key] = items
	close(f.changed)
	f.changed = make(chan struct{})
}

// wait blocks a query with a MinIndex until the index passes it.
func (f *fakeVariables) wait(ctx context.Context, q VariableQuery) error {
	for {
		f.mu.Lock()
		idx, ch := f.index, f.changed
		f.mu.Unlock()
		if q.MinIndex == 0 || idx > q.MinIndex {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (f *fakeVariables) ReadVariable(ctx context.Context, q VariableQuery) (*structs.VariableDecrypted, uint64, error) {
	if q.Namespace == "broken" {
		return nil, 0, errors.New("servers unreachable")
	}
	if err := f.wait(ctx, q); err != nil {
		return nil, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	items, ok := f.vars[q.Namespace+"/"+q.Path]
	if !ok {
		return nil, f.index, nil
	}
	return &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Namespace: q.Namespace, Path: q.Path, ModifyIndex: f.index},
		Items: structs.VariableItems(items)}, f.index, nil
}

func (f *fakeVariables) ListVariables(ctx context.Context, q VariableQuery) ([]*structs.VariableMetadata, uint64, error) {
	if err := f.wait(ctx, q); err != nil {
		return nil, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*structs.VariableMetadata
	for k := range f.vars {
		ns, path, _ := strings.Cut(k, "/")
		if ns == q.Namespace && strings.HasPrefix(path, q.Path) {
			out = append(out, &structs.VariableMetadata{Namespace: ns, Path: path})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, f.index, nil
}

func TestTemplateHook(t *testing.T) {
	t.Setenv("NOMADQ_AGENT_SECRET", "from-the-agent")
	vars := newFakeVariables(map[string]map[string]string{"default/nomad/jobs/web": {"user": "admin"}, "ops/db": {"pw": "s3cret"},
		"default/nomad/jobs/web/g": {"a": "1"}})
	cases := []struct {
		name string
		tmpl structs.Template
		// files are written into the task dir before rendering.
		files map[string]string
		vars  VariableSource
		// want is the rendered file's content; wantEnv the env added.
		want     string
		wantEnv  map[string]string
		wantMode os.FileMode
		err      string
	}{
		{
			name: "inline data with env and NOMAD values",
			tmpl: structs.Template{EmbeddedTmpl: `alloc={{ env "NOMAD_ALLOC_ID" }} greet={{ env "GREETING" }}`, DestPath: "local/out.txt"},
			want: "alloc=aid-1 greet=hello",
		},
		{
			name: "destination interpolated",
			tmpl: structs.Template{EmbeddedTmpl: "x", DestPath: "local/${NOMAD_TASK_NAME}.conf"},
			want: "x",
		},
		{
			name: "custom delimiters leave braces alone",
			tmpl: structs.Template{EmbeddedTmpl: `{{ literal }} [[ env "NOMAD_TASK_NAME" ]]`, DestPath: "local/out.txt", LeftDelim: "[[", RightDelim: "]]"},
			want: "{{ literal }} web",
		},
		{
			name:     "perms",
			tmpl:     structs.Template{EmbeddedTmpl: "secret", DestPath: "secrets/token", Perms: "0600"},
			want:     "secret",
			wantMode: 0o600,
		},
		{
			name:    "env template",
			tmpl:    structs.Template{EmbeddedTmpl: "DB_HOST=db.internal\nDB_PORT=\"5432\"\n# comment\nTASK={{ env \"NOMAD_TASK_NAME\" }}\n", DestPath: "local/db.env", Envvars: true},
			want:    "DB_HOST=db.internal\nDB_PORT=\"5432\"\n# comment\nTASK=web\n",
			wantEnv: map[string]string{"DB_HOST": "db.internal", "DB_PORT": "5432", "TASK": "web"},
		},
		{
			name:  "source from the task dir",
			tmpl:  structs.Template{SourcePath: "local/app.tpl", DestPath: "local/app.conf"},
			files: map[string]string{"local/app.tpl": `name={{ env "NOMAD_JOB_NAME" }}`},
			want:  "name=job",
		},
		{
			name:  "file function reads inside the task dir",
			tmpl:  structs.Template{EmbeddedTmpl: `{{ file "local/in.txt" | toUpper }}`, DestPath: "local/out.txt"},
			files: map[string]string{"local/in.txt": "abc"},
			want:  "ABC",
		},
		{
			name: "sprig and consul-template helpers",
			tmpl: structs.Template{EmbeddedTmpl: `{{ "a,b" | split "," | join "-" }} {{ sprig_upper "x" }} {{ parseJSON "{\"k\":1}" | toJSON }}`, DestPath: "local/out.txt"},
			want: `a-b X {"k":1}`,
		},
		{
			name: "agent environment is masked",
			tmpl: structs.Template{EmbeddedTmpl: `[{{ env "NOMADQ_AGENT_SECRET" }}]`, DestPath: "local/out.txt"},
			want: "[]",
		},
		{
			name: "nomadVar with a reader",
			tmpl: structs.Template{EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/web" }}{{ .user }}{{ end }} {{ (nomadVar "db@ops").pw }} {{ nomadVarExists "nope" }}`, DestPath: "local/out.txt"},
			vars: vars,
			want: "admin s3cret false",
		},
		{
			name: "nomadVar items, keys and parent as in Nomad",
			tmpl: structs.Template{EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/web" }}{{ range $k, $v := . }}{{ $k }}={{ $v }}{{ end }} {{ .Keys }} {{ .Parent.Path }}{{ end }}`, DestPath: "local/out.txt"},
			vars: vars,
			want: "user=admin [user] nomad/jobs/web",
		},
		{
			name: "nomadVarList",
			tmpl: structs.Template{EmbeddedTmpl: `{{ range nomadVarList "nomad/jobs" }}{{ .Path }};{{ end }}[{{ range nomadVarList "none" }}x{{ end }}]`, DestPath: "local/out.txt"},
			vars: vars,
			want: "nomad/jobs/web;nomad/jobs/web/g;[]",
		},
		{
			name: "nomadVar without a source",
			tmpl: structs.Template{EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/web" }}{{ .user }}{{ end }}`, DestPath: "local/out.txt"},
			err:  "function nomadVar: this client reads no Nomad Variables",
		},
		{
			name: "nomadVar of another region",
			tmpl: structs.Template{EmbeddedTmpl: `{{ nomadVar "nomad/jobs/web@default.eu" }}`, DestPath: "local/out.txt"},
			vars: vars,
			err:  `names region "eu"`,
		},
		{
			name: "nomadVar reader error",
			tmpl: structs.Template{EmbeddedTmpl: `{{ nomadVar "x@broken" }}`, DestPath: "local/out.txt"},
			vars: vars,
			err:  "servers unreachable",
		},
		{
			name: "consul key is unsupported",
			tmpl: structs.Template{EmbeddedTmpl: `{{ key "app/config" }}`, DestPath: "local/out.txt"},
			err:  "function key is not supported by nomadq",
		},
		{
			name: "vault secret is unsupported",
			tmpl: structs.Template{EmbeddedTmpl: `{{ with secret "kv/data/x" }}{{ .Data }}{{ end }}`, DestPath: "local/out.txt"},
			err:  "function secret is not supported by nomadq",
		},
		{
			name: "plugin is denied",
			tmpl: structs.Template{EmbeddedTmpl: `{{ plugin "/bin/echo" "hi" }}`, DestPath: "local/out.txt"},
			err:  "function is disabled",
		},
		{
			name: "missing key with error_on_missing_key",
			tmpl: structs.Template{EmbeddedTmpl: `{{ $m := parseJSON "{}" }}{{ $m.nope }}`, DestPath: "local/out.txt", ErrMissingKey: true},
			err:  `map has no entry for key "nope"`,
		},
		{
			name: "missing key without error_on_missing_key",
			tmpl: structs.Template{EmbeddedTmpl: `[{{ $m := parseJSON "{}" }}{{ $m.nope }}]`, DestPath: "local/out.txt"},
			want: "[<no value>]",
		},
		{
			name: "parse error",
			tmpl: structs.Template{EmbeddedTmpl: `{{ if }}`, DestPath: "local/out.txt"},
			err:  "local/out.txt: parse: template: :1: missing value for if",
		},
		{
			name: "file function outside the task dir",
			tmpl: structs.Template{EmbeddedTmpl: `{{ file "../../etc/passwd" }}`, DestPath: "local/out.txt"},
			err:  `function file: path "../../etc/passwd" escapes the task directory`,
		},
		{
			name: "missing source",
			tmpl: structs.Template{SourcePath: "local/none.tpl", DestPath: "local/out.txt"},
			err:  "read source local/none.tpl",
		},
		{
			name: "destination escapes",
			tmpl: structs.Template{EmbeddedTmpl: "x", DestPath: "../../x"},
			err:  `destination: path "../../x" escapes the task directory`,
		},
		{
			name: "env template that is not KEY=VALUE",
			tmpl: structs.Template{EmbeddedTmpl: "just words\n", DestPath: "local/x.env", Envvars: true},
			err:  "local/x.env: read environment variables",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := testPrestartRequest(t)
			for name, content := range tc.files {
				p := filepath.Join(req.TaskDir, name)
				must.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				must.NoError(t, os.WriteFile(p, []byte(content), 0o644))
			}
			tmpl := tc.tmpl
			if tmpl.LeftDelim == "" {
				tmpl.LeftDelim, tmpl.RightDelim = "{{", "}}"
			}
			req.Task.Templates = []*structs.Template{&tmpl}
			resp := &prestartResponse{}
			err := newTemplateHook(templateHookConfig{Vars: tc.vars, Region: "global"}).Prestart(context.Background(), req, resp)
			if tc.err != "" {
				must.ErrorContains(t, err, tc.err)
				must.StrHasPrefix(t, "Template failed: ", err.Error())
				var he *hookError
				must.True(t, errors.As(err, &he))
				must.Eq(t, structs.TaskHookFailed, he.event.Type)
				must.Eq(t, err.Error(), he.event.DisplayMessage)
				return
			}
			must.NoError(t, err)
			dest := filepath.Join(req.TaskDir, req.Env.Interpolate(tmpl.DestPath))
			got, err := os.ReadFile(dest)
			must.NoError(t, err)
			must.Eq(t, tc.want, string(got))
			must.Eq(t, tc.wantEnv, resp.Env)
			if tc.wantMode != 0 {
				fi, err := os.Stat(dest)
				must.NoError(t, err)
				must.Eq(t, tc.wantMode, fi.Mode().Perm())
			}
		})
	}
}

// testPrestartRequest is a request for task "web" of job "job" with a
// task directory laid out as the alloc dir builds it.
func testPrestartRequest(t *testing.T) *prestartRequest {
	t.Helper()
	allocDir := t.TempDir()
	taskDir := filepath.Join(allocDir, "web")
	for _, d := range []string{"local", "secrets", "tmp"} {
		must.NoError(t, os.MkdirAll(filepath.Join(taskDir, d), 0o755))
	}
	task := &structs.Task{Name: "web", Env: map[string]string{"GREETING": "hello"}}
	alloc := &structs.Allocation{ID: "aid-1", Name: "job.g[0]", TaskGroup: "g", Namespace: "default", JobID: "job"}
	return &prestartRequest{
		Task:     task,
		TaskDir:  taskDir,
		AllocDir: allocDir,
		Env:      BuildEnv(EnvInput{Alloc: alloc, Task: task}),
	}
}
