package command

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
)

func TestJobRestart(t *testing.T) {
	monitorPollInterval = 20 * time.Millisecond
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)

	spec := filepath.Join(t.TempDir(), "web.nomad.hcl")
	must.NoError(t, os.WriteFile(spec, []byte(`job "web" {
  datacenters = ["*"]
  group "g" {
    count = 2
    task "t" {
      driver       = "raw_exec"
      kill_timeout = "1s"
      config {
        command = "/bin/sh"
        args    = ["-c", "exec sleep 600"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`), 0o644))
	code, _, errOut := cli(t, addr, "job", "run", spec)
	must.Eq(t, 0, code, must.Sprint(errOut))
	running := func() map[string]*api.AllocationListStub {
		allocs, _, err := c.Jobs().Allocations("web", false, nil)
		must.NoError(t, err)
		out := map[string]*api.AllocationListStub{}
		for _, a := range allocs {
			if a.ClientStatus == "running" && a.DesiredStatus == "run" {
				out[a.ID] = a
			}
		}
		return out
	}
	waitFor(t, "two running allocs", 20*time.Second, func() error {
		if n := len(running()); n != 2 {
			return fmt.Errorf("%d running", n)
		}
		return nil
	})
	before := running()

	t.Run("in place, one by one", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "restart", "-yes", "-batch-wait", "10ms", "we")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "Restarting 2 allocations")
		must.StrContains(t, out, "Waiting 10ms before restarting the next batch")
		must.StrContains(t, out, "Job restarted successfully!")
		waitFor(t, "each alloc restarted once", 20*time.Second, func() error {
			now := running()
			for id := range before {
				a, ok := now[id]
				if !ok {
					return fmt.Errorf("alloc %s is no longer running", id)
				}
				if a.TaskStates["t"].Restarts != 1 || a.TaskStates["t"].State != "running" {
					return fmt.Errorf("alloc %s: %d restarts, %s", id, a.TaskStates["t"].Restarts, a.TaskStates["t"].State)
				}
			}
			return nil
		})
	})
	t.Run("one task, verbose", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "restart", "-yes", "-verbose", "-batch-size", "2", "-group", "g", "-task", "t", "web")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "Restarting 1st batch of 2 allocations")
		must.StrContains(t, out, `Restarting task "t" in allocation`)
		waitFor(t, "each alloc restarted twice and running", 20*time.Second, func() error {
			now := running()
			if len(now) != 2 {
				return fmt.Errorf("%d running allocs", len(now))
			}
			for id, a := range now {
				if a.TaskStates["t"].Restarts != 2 || a.TaskStates["t"].State != "running" {
					return fmt.Errorf("alloc %s: %d restarts, %s", id, a.TaskStates["t"].Restarts, a.TaskStates["t"].State)
				}
			}
			return nil
		})
	})
	t.Run("a group with no allocs", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "restart", "-yes", "-group", "other", "web")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, "No allocations to restart\n", out)
	})
	t.Run("reschedule in one batch", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "restart", "-reschedule", "-on-error", "fail", "-batch-size", "100%", "web")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "Restarting 1st batch of 2 allocations")
		must.StrContains(t, out, "Job restarted successfully!")
		now := running()
		must.MapLen(t, 2, now)
		for id := range now {
			_, old := before[id]
			must.False(t, old, must.Sprintf("alloc %s was not replaced", id))
		}
	})
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"ask without a terminal", []string{"web"}, `Invalid -on-error value "ask": "ask" cannot be used when terminal is not interactive`},
		{"batch-wait ask without a terminal", []string{"-on-error", "fail", "-batch-wait", "ask", "web"}, `Invalid -batch-wait value "ask"`},
		{"bad batch size", []string{"-yes", "-batch-size", "half", "web"}, `Invalid -batch-size value "half"`},
		{"zero batch size", []string{"-yes", "-batch-size", "0", "web"}, "number value must be greater than zero"},
		{"bad on-error", []string{"-on-error", "retry", "web"}, `valid options are "ask" and "fail"`},
		{"all-tasks and task", []string{"-yes", "-all-tasks", "-task", "t", "web"}, "-all-tasks option cannot be used with -task"},
		{"reschedule and task", []string{"-yes", "-reschedule", "-task", "t", "web"}, "-reschedule option cannot be used with -task"},
		{"no-shutdown-delay without reschedule", []string{"-yes", "-no-shutdown-delay", "web"}, "-no-shutdown-delay option only applies with -reschedule"},
		{"unknown job", []string{"-yes", "nope"}, `No job(s) with prefix or ID "nope" found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := cli(t, addr, append([]string{"job", "restart"}, tc.args...)...)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, tc.wantErr)
		})
	}
}

// The questions between batches read their answers from standard input:
// the default depends on whether the batch failed, and with -batch-wait
// ask a duration answer sets the wait.
func TestJobRestartProceed(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		hadErr, ask bool
		want        bool
		wantWait    time.Duration
	}{
		{"enter goes on after a good batch", "\n", false, false, true, 0},
		{"enter stops after a failed batch", "\n", true, false, false, 0},
		{"yes after a failed batch", "y\n", true, false, true, 0},
		{"no", "no\n", false, false, false, 0},
		{"a wrong answer asks again", "maybe\nyes\n", false, false, true, 0},
		{"a duration sets the wait", "2s\n", false, true, true, 2 * time.Second},
		{"a duration is no answer without ask", "2s\n", false, false, false, 0},
		{"end of input stops", "", false, false, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw strings.Builder
			r := &jobRestart{out: &out, errw: &errw, in: bufio.NewReader(strings.NewReader(tc.input)), batchWaitAsk: tc.ask}
			must.Eq(t, tc.want, r.proceed(tc.hadErr))
			must.Eq(t, tc.wantWait, r.batchWait)
		})
	}
	must.Eq(t, "1st 2nd 3rd 4th 11th 12th 13th 21st 102nd", strings.Join([]string{
		ordinal(1), ordinal(2), ordinal(3), ordinal(4), ordinal(11), ordinal(12), ordinal(13), ordinal(21), ordinal(102),
	}, " "))
}
