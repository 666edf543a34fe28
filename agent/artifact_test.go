package agent

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// testTarGz is a gzipped tar of one file, app/hello.txt.
func testTarGz(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	content := "hello from the artifact\n"
	must.NoError(t, tw.WriteHeader(&tar.Header{Name: "app/hello.txt", Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}))
	_, err := tw.Write([]byte(content))
	must.NoError(t, err)
	must.NoError(t, tw.Close())
	must.NoError(t, gz.Close())
	return buf.Bytes()
}

// A tar.gz artifact served on 127.0.0.1 is fetched, checked, unpacked,
// and read by a real raw_exec task; a template can take it as its source.
func TestArtifact_RawExecTaskReadsUnpackedFile(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	archive := testTarGz(t)
	sum := sha256.Sum256(archive)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/app.tar.gz" {
			_, _ = w.Write(archive)
			return
		}
		if r.URL.Path == "/greeting.tpl" {
			_, _ = w.Write([]byte(`{{ file "local/app/hello.txt" | toUpper }}`))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)

	job := api.NewBatchJob("art", "art", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	task := shTask("main", `cat "$NOMAD_TASK_DIR/app/hello.txt" "$NOMAD_TASK_DIR/upper.txt"`)
	task.Artifacts = []*api.TaskArtifact{
		{GetterSource: new(srv.URL + "/app.tar.gz"), GetterOptions: map[string]string{"checksum": "sha256:" + hex.EncodeToString(sum[:])}},
		{GetterSource: new(srv.URL + "/greeting.tpl"), GetterMode: new("file"), RelativeDest: new("local/greeting.tpl")},
	}
	task.Templates = []*api.Template{{SourcePath: new("local/greeting.tpl"), DestPath: new("local/upper.txt")}}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	register(t, c, job)
	allocs := jobAllocs(t, c, "art", 1, 30*time.Second, isTerminal)
	must.Eq(t, "complete", allocs[0].ClientStatus, must.Sprint(allocs[0].TaskStates))
	must.Eq(t, "hello from the artifact\nHELLO FROM THE ARTIFACT\n", taskLogs(t, a, allocs[0].ID, "main"))
	full, _, err := c.Allocations().Info(allocs[0].ID, nil)
	must.NoError(t, err)
	var types []string
	for _, e := range full.TaskStates["main"].Events {
		types = append(types, e.Type)
	}
	must.SliceContains(t, types, api.TaskDownloadingArtifacts)
}

// An artifact that cannot be fetched (wrong checksum, unreachable server)
// fails the task with a Failed Artifact Download event; the restart
// policy retries it once before the task fails.
func TestArtifact_FetchErrorFailsTaskAfterRestarts(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	archive := testTarGz(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(archive) }))
	t.Cleanup(srv.Close)
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	cases := []struct {
		id   string
		art  *api.TaskArtifact
		want string
	}{
		{"art-checksum", &api.TaskArtifact{GetterSource: new(srv.URL + "/app.tar.gz"),
			GetterOptions: map[string]string{"checksum": "sha256:" + hex.EncodeToString(make([]byte, 32))}},
			"Checksums did not match"},
		{"art-unreachable", &api.TaskArtifact{GetterSource: new(downURL + "/app.tar.gz")}, "connection refused"},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			t.Parallel()
			job := api.NewBatchJob(tc.id, tc.id, "global", 50)
			job.Datacenters = []string{"*"}
			tg := api.NewTaskGroup("g", 1)
			tg.RestartPolicy = failOnce()
			tg.ReschedulePolicy = noReschedule()
			task := shTask("main", "echo should-not-run")
			task.Artifacts = []*api.TaskArtifact{tc.art}
			tg.AddTask(task)
			job.AddTaskGroup(tg)
			register(t, c, job)
			allocs := jobAllocs(t, c, tc.id, 1, 30*time.Second, isTerminal)
			must.SliceLen(t, 1, allocs)
			must.Eq(t, "failed", allocs[0].ClientStatus)
			full, _, err := c.Allocations().Info(allocs[0].ID, nil)
			must.NoError(t, err)
			ts := full.TaskStates["main"]
			must.True(t, ts.Failed)
			must.Eq(t, uint64(1), ts.Restarts)
			must.True(t, ts.StartedAt.IsZero(), must.Sprint("the task never ran"))
			var failures []*api.TaskEvent
			for _, e := range ts.Events {
				if e.Type == api.TaskArtifactDownloadFailed {
					failures = append(failures, e)
				}
			}
			must.SliceLen(t, 2, failures)
			must.StrHasPrefix(t, `failed to download artifact "`+*tc.art.GetterSource+`": `, failures[0].DisplayMessage)
			must.StrContains(t, failures[0].DisplayMessage, tc.want)
			must.Eq(t, failures[0].DisplayMessage, failures[0].DownloadError)
			must.Eq(t, api.TaskNotRestarting, ts.Events[len(ts.Events)-1].Type)
		})
	}
}
