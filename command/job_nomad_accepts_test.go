package command

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
)

// Job files that real Nomad accepts and nomadq used to refuse (issue 40):
// logs within the disk per task, canaries on a system job, a task's
// deprecated resources disk, an artifact into the shared alloc dir. Each
// validates, and the disk one says it is ignored.
func TestJobValidate_AcceptsWhatNomadAccepts(t *testing.T) {
	cases := []struct {
		file    string
		warning string
	}{
		{file: "logs_per_task.nomad.hcl"},
		{file: "system_canary.nomad.hcl", warning: `job "system-canary": update block: rolling updates and canaries are not implemented by nomadq`},
		{file: "task_disk.nomad.hcl", warning: `job "task-disk" group "work" task "main": field "Resources.DiskMB": resources disk is deprecated and ignored, as in Nomad`},
		{file: "artifact_alloc_dir.nomad.hcl"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			code, out, errOut := run(t, "", "job", "validate", filepath.Join("testdata", "nomad_accepts", tc.file))
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.StrContains(t, out, "Job validation successful")
			if tc.warning != "" {
				must.StrContains(t, out, tc.warning)
			}
		})
	}
}

// An artifact whose destination is ../alloc/... lands in the alloc's
// shared directory, where the task reads it.
func TestJobRun_ArtifactIntoAllocDir(t *testing.T) {
	monitorPollInterval = 20 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello from the artifact\n")
	}))
	t.Cleanup(srv.Close)
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()

	code, out, errOut := cli(t, addr, "job", "run", "-var", "source="+srv.URL+"/hello.txt",
		filepath.Join("testdata", "nomad_accepts", "artifact_alloc_dir.nomad.hcl"))
	must.Eq(t, 0, code, must.Sprint(out, errOut))
	must.StrContains(t, out, `finished with status "complete"`)

	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	var alloc *api.Allocation
	waitFor(t, "the alloc to complete", 30*time.Second, func() error {
		allocs, _, err := c.Jobs().Allocations("artifact-alloc-dir", false, nil)
		if err != nil {
			return err
		}
		if len(allocs) != 1 || allocs[0].ClientStatus != "complete" {
			var states []string
			for _, a := range allocs {
				states = append(states, a.ClientStatus+" "+taskEvents(a))
			}
			return fmt.Errorf("allocs: %v", states)
		}
		alloc, _, err = c.Allocations().Info(allocs[0].ID, nil)
		return err
	})
	r, err := c.AllocFS().Cat(alloc, "alloc/data/hello.txt", nil)
	must.NoError(t, err)
	body, err := io.ReadAll(r)
	must.NoError(t, err)
	must.Eq(t, "hello from the artifact\n", string(body))

	code, out, errOut = cli(t, addr, "alloc", "logs", alloc.ID, "fetch")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "hello from the artifact\n", out)
}

// The files that were wrongly refused run: the batch ones complete, the
// system job with canaries runs an alloc on the node.
func TestJobRun_NomadAcceptedFilesRun(t *testing.T) {
	monitorPollInterval = 20 * time.Millisecond
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	cases := []struct {
		file, job, status string
	}{
		{"logs_per_task.nomad.hcl", "logs-per-task", "complete"},
		{"task_disk.nomad.hcl", "task-disk", "complete"},
		{"system_canary.nomad.hcl", "system-canary", "running"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			code, out, errOut := cli(t, addr, "job", "run", "-detach", filepath.Join("testdata", "nomad_accepts", tc.file))
			must.Eq(t, 0, code, must.Sprint(out, errOut))
			waitFor(t, tc.job+"'s alloc to be "+tc.status, 30*time.Second, func() error {
				allocs, _, err := c.Jobs().Allocations(tc.job, false, nil)
				if err != nil {
					return err
				}
				if len(allocs) != 1 || allocs[0].ClientStatus != tc.status {
					var states []string
					for _, a := range allocs {
						states = append(states, a.ClientStatus+" "+taskEvents(a))
					}
					return fmt.Errorf("allocs: %v", states)
				}
				return nil
			})
		})
	}
}
