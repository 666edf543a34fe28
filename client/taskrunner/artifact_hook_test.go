package taskrunner

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// tarGz returns a gzipped tar of the files.
func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	must.NoError(t, writeTar(gz, files))
	must.NoError(t, gz.Close())
	return buf.Bytes()
}

func writeTar(w interface{ Write([]byte) (int, error) }, files map[string]string) error {
	tw := tar.NewWriter(w)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			return err
		}
	}
	return tw.Close()
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		f, err := zw.Create(name)
		must.NoError(t, err)
		_, err = f.Write([]byte(content))
		must.NoError(t, err)
	}
	must.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestArtifactHook(t *testing.T) {
	app := tarGz(t, map[string]string{"bin/app.sh": "echo hi\n", "README": "read me"})
	var plainTar bytes.Buffer
	must.NoError(t, writeTar(&plainTar, map[string]string{"data.txt": "tar data"}))
	sum := sha256.Sum256(app)
	var hits atomic.Int64
	mux := http.NewServeMux()
	serve := func(path string, body []byte) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			_, _ = w.Write(body)
		})
	}
	serve("/app.tar.gz", app)
	serve("/data.tar", plainTar.Bytes())
	serve("/site.zip", zipOf(t, map[string]string{"index.html": "<h1>hi</h1>"}))
	serve("/config.json", []byte(`{"a":1}`))
	mux.HandleFunc("/private.txt", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-web" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte("private"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	closed := httptest.NewServer(mux)
	closedURL := closed.URL
	closed.Close()

	cases := []struct {
		name string
		art  structs.TaskArtifact
		// setup prepares the alloc dir (for file sources).
		setup func(t *testing.T, req *prestartRequest)
		// want maps paths in the task dir to their content.
		want map[string]string
		// absent are paths in the task dir that must not exist.
		absent []string
		err    string
	}{
		{
			name: "tar.gz unpacked",
			art:  structs.TaskArtifact{GetterSource: srv.URL + "/app.tar.gz", GetterMode: "any", RelativeDest: "local/"},
			want: map[string]string{"local/bin/app.sh": "echo hi\n", "local/README": "read me"},
		},
		{
			name: "tar unpacked",
			art:  structs.TaskArtifact{GetterSource: srv.URL + "/data.tar", GetterMode: "any", RelativeDest: "local/d"},
			want: map[string]string{"local/d/data.txt": "tar data"},
		},
		{
			name: "zip unpacked",
			art:  structs.TaskArtifact{GetterSource: srv.URL + "/site.zip", GetterMode: "any", RelativeDest: "local/site"},
			want: map[string]string{"local/site/index.html": "<h1>hi</h1>"},
		},
		{
			name: "archive false keeps the archive",
			art: structs.TaskArtifact{GetterSource: srv.URL + "/app.tar.gz", GetterMode: "file", RelativeDest: "local/app.tar.gz",
				GetterOptions: map[string]string{"archive": "false"}},
			want:   map[string]string{"local/app.tar.gz": string(app)},
			absent: []string{"local/README"},
		},
		{
			name: "file mode names the file",
			art:  structs.TaskArtifact{GetterSource: srv.URL + "/config.json", GetterMode: "file", RelativeDest: "local/conf/app.json"},
			want: map[string]string{"local/conf/app.json": `{"a":1}`},
		},
		{
			name: "checksum matches",
			art: structs.TaskArtifact{GetterSource: srv.URL + "/app.tar.gz", GetterMode: "any", RelativeDest: "local/",
				GetterOptions: map[string]string{"checksum": "sha256:" + hex.EncodeToString(sum[:])}},
			want: map[string]string{"local/README": "read me"},
		},
		{
			name: "checksum mismatch",
			art: structs.TaskArtifact{GetterSource: srv.URL + "/app.tar.gz", GetterMode: "any", RelativeDest: "local/",
				GetterOptions: map[string]string{"checksum": "sha256:" + hex.EncodeToString(make([]byte, 32))}},
			err:    "Checksums did not match",
			absent: []string{"local/README"},
		},
		{
			name: "headers interpolated and sent",
			art: structs.TaskArtifact{GetterSource: srv.URL + "/private.txt", GetterMode: "file", RelativeDest: "local/p.txt",
				GetterHeaders: map[string]string{"Authorization": "Bearer tok-${NOMAD_TASK_NAME}"}},
			want: map[string]string{"local/p.txt": "private"},
		},
		{
			name: "not found",
			art:  structs.TaskArtifact{GetterSource: srv.URL + "/none.tgz", GetterMode: "any", RelativeDest: "local/"},
			err:  "bad response code: 404",
		},
		{
			name: "unreachable",
			art:  structs.TaskArtifact{GetterSource: closedURL + "/app.tar.gz", GetterMode: "any", RelativeDest: "local/"},
			err:  "connection refused",
		},
		{
			name: "file source inside the alloc dir",
			art:  structs.TaskArtifact{GetterSource: "file://${NOMAD_ALLOC_DIR}/shared.txt", GetterMode: "file", RelativeDest: "local/shared.txt"},
			setup: func(t *testing.T, req *prestartRequest) {
				must.NoError(t, os.MkdirAll(filepath.Join(req.AllocDir, "alloc"), 0o755))
				must.NoError(t, os.WriteFile(filepath.Join(req.AllocDir, "alloc", "shared.txt"), []byte("shared"), 0o644))
			},
			want: map[string]string{"local/shared.txt": "shared"},
		},
		{
			name: "file source outside the alloc dir",
			art:  structs.TaskArtifact{GetterSource: "file:///etc/hostname", GetterMode: "file", RelativeDest: "local/h"},
			err:  `file source "/etc/hostname" is outside the allocation directory`,
		},
		{
			name: "s3 is not a getter",
			art:  structs.TaskArtifact{GetterSource: "s3::https://s3.amazonaws.com/b/x.tgz", GetterMode: "any", RelativeDest: "local/"},
			err:  "download not supported for scheme 's3'",
		},
		{
			name: "destination escapes",
			art:  structs.TaskArtifact{GetterSource: srv.URL + "/config.json", GetterMode: "file", RelativeDest: "../../x"},
			err:  `destination: path "../../x" escapes the allocation directory`,
		},
		{
			name: "destination in the shared alloc dir",
			art:  structs.TaskArtifact{GetterSource: srv.URL + "/app.tar.gz", GetterMode: "any", RelativeDest: "../alloc/app"},
			want: map[string]string{"../alloc/app/README": "read me", "../alloc/app/bin/app.sh": "echo hi\n"},
		},
		{
			name: "destination under NOMAD_ALLOC_DIR",
			art:  structs.TaskArtifact{GetterSource: srv.URL + "/config.json", GetterMode: "file", RelativeDest: "${NOMAD_ALLOC_DIR}/conf/app.json"},
			want: map[string]string{"../alloc/conf/app.json": `{"a":1}`},
		},
		{
			name: "absolute destination is in the task dir",
			art:  structs.TaskArtifact{GetterSource: srv.URL + "/config.json", GetterMode: "file", RelativeDest: "/local/abs.json"},
			want: map[string]string{"local/abs.json": `{"a":1}`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := testPrestartRequest(t)
			req.Env.Env["NOMAD_ALLOC_DIR"] = filepath.Join(req.AllocDir, "alloc")
			if tc.setup != nil {
				tc.setup(t, req)
			}
			art := tc.art
			req.Task.Artifacts = []*structs.TaskArtifact{&art}
			var events []*structs.TaskEvent
			h := newArtifactHook(func(e *structs.TaskEvent) { events = append(events, e) })
			err := h.Prestart(context.Background(), req, &prestartResponse{})
			must.Len(t, 1, events)
			must.Eq(t, structs.TaskDownloadingArtifacts, events[0].Type)
			for _, p := range tc.absent {
				_, statErr := os.Stat(filepath.Join(req.TaskDir, p))
				must.True(t, os.IsNotExist(statErr), must.Sprintf("%s exists", p))
			}
			if tc.err != "" {
				must.ErrorContains(t, err, tc.err)
				must.StrHasPrefix(t, `failed to download artifact "`+art.GetterSource+`": `, err.Error())
				var he *hookError
				must.True(t, errors.As(err, &he))
				must.Eq(t, structs.TaskArtifactDownloadFailed, he.event.Type)
				must.Eq(t, err.Error(), he.event.DownloadError)
				return
			}
			must.NoError(t, err)
			for p, want := range tc.want {
				got, err := os.ReadFile(filepath.Join(req.TaskDir, p))
				must.NoError(t, err)
				must.Eq(t, want, string(got))
			}
		})
	}
}

// An artifact fetched once is not fetched again when the task restarts,
// and one that failed is tried again.
func TestArtifactHook_FetchesOnce(t *testing.T) {
	var hits atomic.Int64
	fail := atomic.Bool{}
	fail.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			hits.Add(1)
		}
		if fail.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("v1"))
	}))
	t.Cleanup(srv.Close)
	req := testPrestartRequest(t)
	req.Task.Artifacts = []*structs.TaskArtifact{{GetterSource: srv.URL + "/v.txt", GetterMode: "file", RelativeDest: "local/v.txt"}}
	var events []string
	h := newArtifactHook(func(e *structs.TaskEvent) { events = append(events, e.Type) })

	must.Error(t, h.Prestart(context.Background(), req, &prestartResponse{}))
	fail.Store(false)
	must.NoError(t, h.Prestart(context.Background(), req, &prestartResponse{}))
	must.NoError(t, h.Prestart(context.Background(), req, &prestartResponse{}))
	must.Eq(t, 2, hits.Load())
	must.Eq(t, []string{structs.TaskDownloadingArtifacts, structs.TaskDownloadingArtifacts}, events)
}

// fetch runs the artifact hook on one artifact and returns its error.
func fetch(t *testing.T, req *prestartRequest, art structs.TaskArtifact) error {
	t.Helper()
	req.Task.Artifacts = []*structs.TaskArtifact{&art}
	return newArtifactHook(func(*structs.TaskEvent) {}).Prestart(context.Background(), req, &prestartResponse{})
}

// options.insecure (GetterInsecure) skips TLS verification; without it a
// server whose certificate the client does not trust is refused.
func TestArtifactHook_Insecure(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("over tls"))
	}))
	t.Cleanup(srv.Close)
	art := structs.TaskArtifact{GetterSource: srv.URL + "/t.txt", GetterMode: "file", RelativeDest: "local/t.txt"}

	req := testPrestartRequest(t)
	must.ErrorContains(t, fetch(t, req, art), "certificate")

	req = testPrestartRequest(t)
	art.GetterInsecure = true
	must.NoError(t, fetch(t, req, art))
	got, err := os.ReadFile(filepath.Join(req.TaskDir, "local/t.txt"))
	must.NoError(t, err)
	must.Eq(t, "over tls", string(got))
}

// A directory file source inside the alloc dir is copied (a link would
// let the task write into another task's files); a symlink in it fails
// the download.
func TestArtifactHook_FileDirectoryCopied(t *testing.T) {
	req := testPrestartRequest(t)
	shared := filepath.Join(req.AllocDir, "alloc", "conf")
	must.NoError(t, os.MkdirAll(filepath.Join(shared, "sub"), 0o755))
	must.NoError(t, os.WriteFile(filepath.Join(shared, "a.txt"), []byte("a"), 0o644))
	must.NoError(t, os.WriteFile(filepath.Join(shared, "sub", "b.txt"), []byte("b"), 0o600))
	art := structs.TaskArtifact{GetterSource: "file://" + shared, GetterMode: "dir", RelativeDest: "local/conf"}
	must.NoError(t, fetch(t, req, art))
	for p, want := range map[string]string{"local/conf/a.txt": "a", "local/conf/sub/b.txt": "b"} {
		got, err := os.ReadFile(filepath.Join(req.TaskDir, p))
		must.NoError(t, err)
		must.Eq(t, want, string(got))
	}
	fi, err := os.Lstat(filepath.Join(req.TaskDir, "local/conf"))
	must.NoError(t, err)
	must.True(t, fi.IsDir(), must.Sprint("the directory is copied, not linked"))

	must.NoError(t, os.Symlink("/etc/hostname", filepath.Join(shared, "escape")))
	art.RelativeDest = "local/conf2"
	must.ErrorContains(t, fetch(t, req, art), "is not a regular file or directory")
}

// A git source is cloned with the git command (skipped where git is not
// installed).
func TestArtifactHook_Git(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	repo := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(gitBin, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		must.NoError(t, err, must.Sprintf("git %v: %s", args, out))
	}
	run("init", "-q")
	must.NoError(t, os.WriteFile(filepath.Join(repo, "hello.txt"), []byte("from git"), 0o644))
	run("add", "hello.txt")
	run("commit", "-q", "-m", "one")

	req := testPrestartRequest(t)
	must.NoError(t, fetch(t, req, structs.TaskArtifact{GetterSource: "git::file://" + repo, GetterMode: "dir", RelativeDest: "local/repo"}))
	got, err := os.ReadFile(filepath.Join(req.TaskDir, "local/repo/hello.txt"))
	must.NoError(t, err)
	must.Eq(t, "from git", string(got))
}
