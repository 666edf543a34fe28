package command

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/agenttest"
)

// echoJob is a service job whose one task prints word and then waits, so
// which version an alloc runs shows in its log.
func echoJob(t *testing.T, dir, word string) string {
	t.Helper()
	src := fmt.Sprintf(`job "echo" {
  datacenters = ["*"]
  type        = "service"

  group "g" {
    task "t" {
      driver       = "raw_exec"
      kill_timeout = "1s"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo %s; exec sleep 600"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`, word)
	p := filepath.Join(dir, word+".nomad.hcl")
	must.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	return p
}

// waitFor retries check until it succeeds or timeout passes, then fails
// the test with what it was waiting for and the last error.
func waitFor(t *testing.T, what string, timeout time.Duration, check func() error) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(
		wait.ErrorFunc(check),
		wait.Timeout(timeout),
		wait.Gap(25*time.Millisecond),
	), must.Sprintf("waiting %s for %s", timeout, what))
}

// runningAlloc waits for the one running alloc of job at version and
// returns it.
func runningAlloc(t *testing.T, c *api.Client, job string, version uint64) *api.AllocationListStub {
	t.Helper()
	var found *api.AllocationListStub
	waitFor(t, fmt.Sprintf("a running alloc of %s version %d", job, version), 20*time.Second, func() error {
		allocs, _, err := c.Jobs().Allocations(job, false, nil)
		if err != nil {
			return err
		}
		var states []string
		for _, a := range allocs {
			if a.JobVersion == version && a.ClientStatus == "running" && a.DesiredStatus == "run" {
				found = a
				return nil
			}
			states = append(states, fmt.Sprintf("v%d %s/%s %s", a.JobVersion, a.DesiredStatus, a.ClientStatus, taskEvents(a)))
		}
		return fmt.Errorf("allocs: %v", states)
	})
	return found
}

// taskEvents lists the events of an alloc's tasks, for failure messages.
func taskEvents(a *api.AllocationListStub) string {
	var b strings.Builder
	for name, ts := range a.TaskStates {
		for _, e := range ts.Events {
			fmt.Fprintf(&b, "[%s: %s %s%s]", name, e.Type, e.DisplayMessage, e.DriverError)
		}
	}
	return b.String()
}

func TestJobHistoryAndRevert(t *testing.T) {
	monitorPollInterval = 20 * time.Millisecond
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	dir := t.TempDir()

	code, _, errOut := cli(t, addr, "job", "run", "-detach", echoJob(t, dir, "first"))
	must.Eq(t, 0, code, must.Sprint(errOut))
	runningAlloc(t, c, "echo", 0)
	// The top-level alias runs the same command.
	code, _, errOut = cli(t, addr, "run", "-detach", echoJob(t, dir, "second"))
	must.Eq(t, 0, code, must.Sprint(errOut))
	runningAlloc(t, c, "echo", 1)

	t.Run("history lists versions newest first", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "history", "echo")
		must.Eq(t, 0, code, must.Sprint(errOut))
		want := "Version     = 1\nStable      = false\nSubmit Date = <TIME>\n\n" +
			"Version     = 0\nStable      = false\nSubmit Date = <TIME>\n"
		must.Eq(t, normalize(want), normalize(out))
	})
	t.Run("history -p shows what each version changed", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "history", "-p", "ec")
		must.Eq(t, 0, code, must.Sprint(errOut))
		blocks := strings.Split(out, "\n\n")
		must.Len(t, 2, blocks)
		must.StrContains(t, blocks[0], "Version     = 1\n")
		must.StrContains(t, blocks[0], "Diff        =\n+/- Job: \"echo\"\n+/- Task Group: \"g\"")
		must.StrContains(t, blocks[0], `+/- Task: "t"`)
		must.StrContains(t, blocks[0], `"echo first; exec sleep 600" => "echo second; exec sleep 600"`)
		// The first version has nothing to compare with.
		must.StrNotContains(t, blocks[1], "Diff")
	})
	t.Run("history -version, -json, -t and -full", func(t *testing.T) {
		code, out, _ := cli(t, addr, "job", "history", "-version", "0", "-t", "{{.Version}} {{(index (index .TaskGroups 0).Tasks 0).Config.args}}", "echo")
		must.Eq(t, 0, code)
		must.Eq(t, "0 [-c echo first; exec sleep 600]\n", out)
		code, out, _ = cli(t, addr, "job", "history", "-json", "echo")
		must.Eq(t, 0, code)
		must.StrContains(t, out, `"Version": 1`)
		must.StrContains(t, out, `"Version": 0`)
		code, out, _ = cli(t, addr, "job", "history", "-full", "-version", "1", "echo")
		must.Eq(t, 0, code)
		must.StrContains(t, out, "Full        = JSON Job:\n{")
		code, _, errOut := cli(t, addr, "job", "history", "-version", "7", "echo")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, `job "echo" has no version 7`)
		code, _, errOut = cli(t, addr, "job", "history", "-json", "-p", "echo")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "-json and -t are exclusive with -p and -full")
		code, _, errOut = cli(t, addr, "job", "history", "-diff-tag", "x", "-p", "echo")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "flag provided but not defined: -diff-tag")
	})
	t.Run("inspect -version shows an old version", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "inspect", "-version", "0", "echo")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, `"echo first; exec sleep 600"`)
		code, _, errOut = cli(t, addr, "job", "inspect", "-hcl", "echo")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "-hcl is not supported by nomadq")
	})

	t.Run("revert runs the old version's command", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "revert", "echo", "0")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, `Evaluation triggered by job "echo"`)
		must.StrContains(t, out, `finished with status "complete"`)

		alloc := runningAlloc(t, c, "echo", 2)
		full, _, err := c.Allocations().Info(alloc.ID, nil)
		must.NoError(t, err)
		must.Eq(t, []any{"-c", "echo first; exec sleep 600"}, full.Job.TaskGroups[0].Tasks[0].Config["args"].([]any))
		waitFor(t, "the reverted alloc's log", 10*time.Second, func() error {
			code, out, errOut := cli(t, addr, "alloc", "logs", alloc.ID, "t")
			if code != 0 || out != "first\n" {
				return fmt.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			return nil
		})
		code, out, _ = cli(t, addr, "job", "history", "-t", "{{range .}}{{.Version}} {{end}}", "echo")
		must.Eq(t, 0, code)
		must.Eq(t, "2 1 0 \n", out)

		code, _, errOut = cli(t, addr, "job", "revert", "echo", "v1")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, `Error parsing version "v1"`)
		code, _, errOut = cli(t, addr, "job", "revert", "echo", "9")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "Error retrieving job versions")
	})

	t.Run("allocs", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "allocs", "echo")
		must.Eq(t, 0, code, must.Sprint(errOut))
		lines := strings.Split(strings.TrimSpace(out), "\n")
		must.Eq(t, "ID  Node ID  Task Group  Version  Desired  Status  Created  Modified", normalize(lines[0]))
		must.Len(t, 3, lines[1:])
		must.StrContains(t, normalize(lines[1]), "  g  2  run  running  ")
		code, out, _ = cli(t, addr, "job", "allocs", "-t", "{{range .}}{{.JobVersion}}{{end}}", "echo")
		must.Eq(t, 0, code)
		must.Eq(t, "3\n", fmt.Sprint(len(strings.TrimSpace(out)))+"\n")
		code, _, errOut = cli(t, addr, "job", "allocs", "nope")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, `No job(s) with prefix or ID "nope" found`)
	})

	t.Run("scale", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "scale", "-detach", "echo", "2")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "Job scale successful\nEvaluation ID: ")
		waitFor(t, "two running allocs", 20*time.Second, func() error {
			allocs, _, err := c.Jobs().Allocations("echo", false, nil)
			if err != nil {
				return err
			}
			n := 0
			for _, a := range allocs {
				if a.ClientStatus == "running" && a.DesiredStatus == "run" {
					n++
				}
			}
			if n != 2 {
				return fmt.Errorf("%d running", n)
			}
			return nil
		})
		code, out, errOut = cli(t, addr, "job", "scale", "echo", "g", "1")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, `finished with status "complete"`)
		code, _, errOut = cli(t, addr, "job", "scale", "echo", "nogroup", "1")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "Group nogroup not found within job")
		code, _, errOut = cli(t, addr, "job", "scale", "echo", "many")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "Failed to convert count string to int")
	})

	t.Run("eval", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "eval", "-detach", "echo")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, "Created eval ID: \"<ID>\" \n", normalize(out))
		code, out, errOut = cli(t, addr, "job", "eval", "-force-reschedule", "echo")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, `finished with status "complete"`)
	})

	t.Run("stop alias, system gc and reconcile", func(t *testing.T) {
		code, _, errOut := cli(t, addr, "stop", "echo")
		must.Eq(t, 0, code, must.Sprint(errOut))
		waitFor(t, "job echo dead", 20*time.Second, func() error {
			j, _, err := c.Jobs().Info("echo", nil)
			if err != nil {
				return err
			}
			if *j.Status != "dead" {
				return fmt.Errorf("status %s", *j.Status)
			}
			return nil
		})
		code, out, errOut := cli(t, addr, "system", "gc")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, "", out)
		waitFor(t, "job echo collected", 20*time.Second, func() error {
			_, _, err := c.Jobs().Info("echo", nil)
			var ue api.UnexpectedResponseError
			if errors.As(err, &ue) && ue.StatusCode() == 404 {
				return nil
			}
			return fmt.Errorf("job still there (%v)", err)
		})
		code, out, errOut = cli(t, addr, "system", "reconcile", "summaries")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, "", out)
		code, _, errOut = cli(t, addr, "system", "gc", "extra")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "This command takes no arguments")
	})
}
