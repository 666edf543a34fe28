package agent

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// varJob is a batch job of one long raw_exec task with one template, in
// a group that fails at once when the task fails.
func varJob(id, tmpl, script string, edit func(*api.Template)) *api.Job {
	job := api.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	tg.ReschedulePolicy = noReschedule()
	task := shTask("main", script)
	t := &api.Template{EmbeddedTmpl: new(tmpl), DestPath: new("local/out.txt")}
	if edit != nil {
		edit(t)
	}
	task.Templates = []*api.Template{t}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// waitLog waits until the main task's stdout contains want.
func waitLog(t *testing.T, a *Agent, c *api.Client, token, jobID, want string) *api.Allocation {
	t.Helper()
	var alloc *api.Allocation
	must.Wait(t, wait.InitialSuccess(wait.Timeout(60*time.Second), wait.Gap(200*time.Millisecond), wait.ErrorFunc(func() error {
		stubs, _, err := c.Jobs().Allocations(jobID, false, nil)
		if err != nil || len(stubs) != 1 {
			return fmt.Errorf("allocs of %s: %v %v", jobID, stubs, err)
		}
		if alloc, _, err = c.Allocations().Info(stubs[0].ID, nil); err != nil {
			return err
		}
		req, err := http.NewRequest(http.MethodGet, a.HTTPAddr()+"/v1/client/fs/logs/"+alloc.ID+"?task=main&type=stdout&plain=true", nil)
		if err != nil {
			return err
		}
		req.Header.Set("X-Nomad-Token", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			return fmt.Errorf("stdout (%d) %q has no %q yet (task %v)", resp.StatusCode, b, want, alloc.TaskStates["main"])
		}
		return nil
	})))
	return alloc
}

// eventsOf waits until the main task of the alloc has at least n events
// that pick names, and returns those names.
func eventsOf(t *testing.T, c *api.Client, allocID string, n int, pick func(*api.TaskEvent) string) []string {
	t.Helper()
	var out []string
	must.Wait(t, wait.InitialSuccess(wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond), wait.ErrorFunc(func() error {
		alloc, _, err := c.Allocations().Info(allocID, nil)
		if err != nil {
			return err
		}
		out = nil
		if ts := alloc.TaskStates["main"]; ts != nil {
			for _, e := range ts.Events {
				if name := pick(e); name != "" {
					out = append(out, name)
				}
			}
		}
		if len(out) < n {
			return fmt.Errorf("%d of %d events so far: %v", len(out), n, out)
		}
		return nil
	})))
	return out
}

// Templates read Nomad Variables through the task's workload identity
// (ACLs on, no token in the job): a changed variable renders the
// template again and its change_mode restarts or signals the real
// raw_exec task; a path outside the job's own is refused.
func TestTemplate_NomadVariables(t *testing.T) {
	a, root, rootToken := aclAgent(t)
	token := rootToken.SecretID
	set := func(path, k, v string) {
		t.Helper()
		_, _, err := root.Variables().Create(&api.Variable{Path: path, Items: api.VariableItems{k: v}}, nil)
		must.NoError(t, err)
	}
	set("nomad/jobs/var-signal", "greeting", "one")
	set("nomad/jobs/var-restart/g/main", "greeting", "one")
	set("app/secret", "k", "hidden")

	t.Run("signal", func(t *testing.T) {
		t.Parallel()
		job := varJob("var-signal", `greeting={{ with nomadVar "nomad/jobs/var-signal" }}{{ .greeting }}{{ end }} listed={{ range nomadVarList "nomad/jobs" }}{{ .Path }},{{ end }}`,
			`out="$NOMAD_TASK_DIR/out.txt"; trap 'cat "$out"; echo' HUP; cat "$out"; echo; while true; do sleep 0.1; done`,
			func(t *api.Template) { t.ChangeMode = new("signal"); t.ChangeSignal = new("SIGHUP") })
		register(t, root, job)
		waitLog(t, a, root, token, "var-signal", "greeting=one listed=nomad/jobs/var-signal,\n")
		set("nomad/jobs/var-signal", "greeting", "two")
		alloc := waitLog(t, a, root, token, "var-signal", "greeting=two listed=nomad/jobs/var-signal,\n")
		// The task prints before the client's batched update carries the
		// event to the server: wait for it.
		reasons := eventsOf(t, root, alloc.ID, 1, func(e *api.TaskEvent) string {
			if e.Type == api.TaskSignaling {
				return e.TaskSignal + ": " + e.TaskSignalReason
			}
			return ""
		})
		must.Eq(t, []string{"SIGHUP: Template re-rendered"}, reasons)
		full, _, err := root.Allocations().Info(alloc.ID, nil)
		must.NoError(t, err)
		must.Eq(t, uint64(0), full.TaskStates["main"].Restarts)
	})
	t.Run("restart", func(t *testing.T) {
		t.Parallel()
		job := varJob("var-restart", `greeting={{ with nomadVar "nomad/jobs/var-restart/g/main" }}{{ .greeting }}{{ end }}`,
			`cat "$NOMAD_TASK_DIR/out.txt"; echo; while true; do sleep 0.1; done`,
			func(t *api.Template) { t.ChangeMode = new("restart") })
		register(t, root, job)
		waitLog(t, a, root, token, "var-restart", "greeting=one\n")
		set("nomad/jobs/var-restart/g/main", "greeting", "two")
		alloc := waitLog(t, a, root, token, "var-restart", "greeting=one\ngreeting=two\n")
		reasons := eventsOf(t, root, alloc.ID, 1, func(e *api.TaskEvent) string {
			if e.Type == api.TaskRestartSignal {
				return e.RestartReason
			}
			return ""
		})
		must.Eq(t, []string{"Template with change_mode restart re-rendered"}, reasons)
		full, _, err := root.Allocations().Info(alloc.ID, nil)
		must.NoError(t, err)
		must.Eq(t, uint64(1), full.TaskStates["main"].Restarts)
	})
	t.Run("foreign path refused", func(t *testing.T) {
		t.Parallel()
		register(t, root, varJob("var-refused", `{{ with nomadVar "app/secret" }}{{ .k }}{{ end }}`, "echo should-not-run", nil))
		allocs := jobAllocs(t, root, "var-refused", 1, 60*time.Second, isTerminal)
		full, _, err := root.Allocations().Info(allocs[0].ID, nil)
		must.NoError(t, err)
		ts := full.TaskStates["main"]
		must.True(t, ts.Failed)
		must.True(t, ts.StartedAt.IsZero(), must.Sprint("the task never ran"))
		var msg string
		for _, e := range ts.Events {
			if e.Type == "Task hook failed" {
				msg = e.DisplayMessage
			}
		}
		must.StrContains(t, msg, `Template failed: local/out.txt: execute: `)
		must.StrContains(t, msg, `read variable "app/secret" in namespace "default"`)
		must.StrContains(t, msg, "403")
	})
}
