package taskrunner

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// fakeControl records what change modes asked of the task.
type fakeControl struct {
	mu       sync.Mutex
	restarts []string
	signals  []string
	execs    [][]string
	kills    int
}

func (c *fakeControl) restartFor(reason string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.restarts = append(c.restarts, reason)
	return nil
}

func (c *fakeControl) signalFor(sig, _ string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.signals = append(c.signals, sig)
	return nil
}

func (c *fakeControl) Exec(_ context.Context, o *drivers.ExecOptions) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.execs = append(c.execs, o.Command)
	return 1, nil
}

func (c *fakeControl) Kill(KillOpts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kills++
}

// eventLog collects emitted events.
type eventLog struct {
	mu     sync.Mutex
	events []*structs.TaskEvent
}

func (l *eventLog) emit(e *structs.TaskEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) messages() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		out = append(out, e.DisplayMessage)
	}
	return out
}

// A template of a variable that does not exist yet holds the task until
// the variable is written, as in Nomad.
func TestTemplateHook_WaitsForMissingVariable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		vars := newFakeVariables(map[string]map[string]string{})
		events := &eventLog{}
		req := testPrestartRequest(t)
		req.Task.Templates = []*structs.Template{{EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/job" }}{{ .k }}{{ end }}`, DestPath: "local/out", LeftDelim: "{{", RightDelim: "}}", Once: true}}
		h := newTemplateHook(templateHookConfig{Vars: vars, Region: "global", Emit: events.emit})
		done := make(chan error, 1)
		go func() { done <- h.Prestart(context.Background(), req, &prestartResponse{}) }()
		synctest.Wait()
		must.Eq(t, []string{"Template: Missing: nomad.var.block(nomad/jobs/job@default)"}, events.messages())
		select {
		case err := <-done:
			t.Fatalf("prestart returned before the variable exists: %v", err)
		default:
		}
		vars.set("default/nomad/jobs/job", map[string]string{"k": "v"})
		must.NoError(t, <-done)
		b, err := os.ReadFile(filepath.Join(req.TaskDir, "local/out"))
		must.NoError(t, err)
		must.Eq(t, "v", string(b))
	})
}

// A written variable renders its templates again; each change_mode
// applies once for a change of its template's output, and a template
// whose output did not change does nothing.
func TestTemplateHook_ChangeModes(t *testing.T) {
	cases := []struct {
		name  string
		tmpl  structs.Template
		check func(t *testing.T, c *fakeControl)
	}{
		{"restart", structs.Template{ChangeMode: structs.TemplateChangeModeRestart}, func(t *testing.T, c *fakeControl) {
			must.Eq(t, []string{reasonTemplateRestart}, c.restarts)
		}},
		{"signal", structs.Template{ChangeMode: structs.TemplateChangeModeSignal, ChangeSignal: "SIGHUP", Splay: time.Minute}, func(t *testing.T, c *fakeControl) {
			must.Eq(t, []string{"SIGHUP"}, c.signals)
		}},
		{"script", structs.Template{ChangeMode: structs.TemplateChangeModeScript, ChangeScript: &structs.ChangeScript{Command: "/bin/reload", Args: []string{"${NOMAD_TASK_NAME}"}, FailOnError: true}}, func(t *testing.T, c *fakeControl) {
			must.Eq(t, [][]string{{"/bin/reload", "web"}}, c.execs)
			must.Eq(t, 1, c.kills) // the fake script exits 1
		}},
		{"noop", structs.Template{ChangeMode: structs.TemplateChangeModeNoop}, func(t *testing.T, c *fakeControl) {
			must.Eq(t, 0, len(c.restarts)+len(c.signals)+len(c.execs))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				vars := newFakeVariables(map[string]map[string]string{"default/nomad/jobs/job": {"k": "one"}, "default/other": {"x": "1"}})
				ctl := &fakeControl{}
				stop := make(chan struct{})
				defer close(stop)
				req := testPrestartRequest(t)
				tmpl := tc.tmpl
				tmpl.EmbeddedTmpl, tmpl.DestPath, tmpl.LeftDelim, tmpl.RightDelim = `{{ (nomadVar "nomad/jobs/job").k }}`, "local/out", "{{", "}}"
				req.Task.Templates = []*structs.Template{&tmpl}
				h := newTemplateHook(templateHookConfig{Vars: vars, Region: "global", Control: ctl, Stop: []<-chan struct{}{stop}})
				must.NoError(t, h.Prestart(context.Background(), req, &prestartResponse{}))
				out := filepath.Join(req.TaskDir, "local/out")

				// Another variable's write wakes the watch but changes
				// no output: nothing happens.
				vars.set("default/other", map[string]string{"x": "2"})
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				must.Eq(t, 0, len(ctl.restarts)+len(ctl.signals)+len(ctl.execs))

				vars.set("default/nomad/jobs/job", map[string]string{"k": "two"})
				time.Sleep(2 * time.Minute) // past any splay
				synctest.Wait()
				b, err := os.ReadFile(out)
				must.NoError(t, err)
				must.Eq(t, "two", string(b))
				ctl.mu.Lock()
				defer ctl.mu.Unlock()
				tc.check(t, ctl)
			})
		})
	}
}
