package agent

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// taskLogs returns what a task of an alloc wrote to stdout.
func taskLogs(t *testing.T, a *Agent, allocID, task string) string {
	t.Helper()
	code, body := httpDo(t, http.MethodGet, a.HTTPAddr()+"/v1/client/fs/logs/"+allocID+"?task="+task+"&type=stdout&plain=true")
	must.Eq(t, http.StatusOK, code, must.Sprint(body))
	return body
}

// failOnce is a restart policy of one attempt after a short delay, so a
// failing prestart hook is retried once and then fails the task.
func failOnce() *api.RestartPolicy {
	return &api.RestartPolicy{Attempts: new(1), Interval: new(time.Hour), Delay: new(time.Second), Mode: new("fail")}
}

// noReschedule keeps a failed alloc from being replaced, so the test
// reads the one alloc the policy acted on.
func noReschedule() *api.ReschedulePolicy {
	return &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
}

// A real raw_exec task reads the file a template rendered (inline data
// with the task's env and NOMAD_* values) and sees an env template's
// value in its environment.
func TestTemplate_RawExecTaskSeesRenderedFileAndEnv(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	job := api.NewBatchJob("tmpl", "tmpl", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	task := shTask("main", `cat "$NOMAD_TASK_DIR/out.txt"; echo; echo "mode=$APP_MODE"; stat -c %a "$NOMAD_SECRETS_DIR/token"`)
	task.Env = map[string]string{"GREETING": "hello"}
	task.Templates = []*api.Template{
		{EmbeddedTmpl: new(`alloc={{ env "NOMAD_ALLOC_ID" }} job={{ env "NOMAD_JOB_NAME" }} greet={{ env "GREETING" }} [[ x ]]`), DestPath: new("local/out.txt")},
		{EmbeddedTmpl: new(`APP_MODE=prod-{{ env "NOMAD_TASK_NAME" }}`), DestPath: new("local/app.env"), Envvars: new(true)},
		{EmbeddedTmpl: new(`[[ env "NOMAD_JOB_ID" ]]`), DestPath: new("secrets/token"), Perms: new("0600"), LeftDelim: new("[["), RightDelim: new("]]")},
	}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	register(t, c, job)
	allocs := jobAllocs(t, c, "tmpl", 1, 30*time.Second, isTerminal)
	must.Eq(t, "complete", allocs[0].ClientStatus, must.Sprint(allocs[0].TaskStates))
	out := taskLogs(t, a, allocs[0].ID, "main")
	must.Eq(t, "alloc="+allocs[0].ID+" job=tmpl greet=hello [[ x ]]\nmode=prod-main\n600\n", out)
}

// A template that cannot render fails the task with the message in its
// events; the restart policy counts the attempt.
func TestTemplate_RenderErrorFailsTaskWithEvent(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	job := api.NewBatchJob("tmpl-bad", "tmpl-bad", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.RestartPolicy = failOnce()
	tg.ReschedulePolicy = noReschedule()
	task := shTask("main", "echo should-not-run")
	task.Templates = []*api.Template{{EmbeddedTmpl: new(`{{ key "app/config" }}`), DestPath: new("local/app.conf")}}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	register(t, c, job)
	allocs := jobAllocs(t, c, "tmpl-bad", 1, 30*time.Second, isTerminal)
	must.SliceLen(t, 1, allocs)
	must.Eq(t, "failed", allocs[0].ClientStatus)
	full, _, err := c.Allocations().Info(allocs[0].ID, nil)
	must.NoError(t, err)
	ts := full.TaskStates["main"]
	must.True(t, ts.Failed)
	must.Eq(t, uint64(1), ts.Restarts)
	must.True(t, ts.StartedAt.IsZero(), must.Sprint("the task never ran"))
	var failures []string
	for _, e := range ts.Events {
		if e.Type == "Task hook failed" {
			failures = append(failures, e.DisplayMessage)
		}
	}
	must.SliceLen(t, 2, failures)
	must.StrHasPrefix(t, "Template failed: local/app.conf: execute: ", failures[0])
	must.StrContains(t, failures[0], "function key is not supported by nomadq")
	last := ts.Events[len(ts.Events)-1]
	must.Eq(t, api.TaskNotRestarting, last.Type)
	must.StrContains(t, last.DisplayMessage, "Exceeded allowed attempts 1")
}

// Template settings that cannot take effect are refused at registration
// with the field and value.
func TestTemplate_RefusedAtRegistration(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	cases := []struct {
		name string
		tmpl *api.Template
		want string
	}{
		{"bad perms", &api.Template{EmbeddedTmpl: new("x"), DestPath: new("local/x"), Perms: new("644x")},
			`template 1 perms "644x" is not allowed: must be an octal file mode such as "0644"`},
		{"destination escapes", &api.Template{EmbeddedTmpl: new("x"), DestPath: new("../../etc/x")},
			`template 1 destination "../../etc/x" is not allowed: must stay inside the task directory`},
		{"unknown change_mode", &api.Template{EmbeddedTmpl: new("x"), DestPath: new("local/x"), ChangeMode: new("reload")},
			`template 1 change_mode "reload" is not allowed: must be one of noop, restart, signal, script`},
		{"wait", &api.Template{EmbeddedTmpl: new("x"), DestPath: new("local/x"), Wait: &api.WaitConfig{Min: new(time.Second)}},
			`task "main": field "Templates[0].Wait" is not supported by nomadq`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := api.NewBatchJob("tmpl-refused", "tmpl-refused", "global", 50)
			job.Datacenters = []string{"*"}
			tg := api.NewTaskGroup("g", 1)
			task := shTask("main", "true")
			task.Templates = []*api.Template{tc.tmpl}
			tg.AddTask(task)
			job.AddTaskGroup(tg)
			_, _, err := c.Jobs().Register(job, nil)
			must.ErrorContains(t, err, "400")
			must.ErrorContains(t, err, tc.want)
			_, _, err = c.Jobs().Info("tmpl-refused", nil)
			must.True(t, err != nil && strings.Contains(err.Error(), "404"), must.Sprint("nothing stored"))
		})
	}
}
