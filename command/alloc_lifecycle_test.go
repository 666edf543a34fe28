package command

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// The alloc commands against a real agent running a raw_exec task.
func TestCLI_AllocLifecycle(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) {
		c.Client.Options = map[string]string{"driver.raw_exec.enable": "1"}
	})
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	job := api.NewBatchJob("clilife", "clilife", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	task := api.NewTask("main", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c",
		"echo written > out.txt; echo start >> starts.txt; trap 'echo usr1 > sig.txt' USR1; while true; do sleep 0.1; done"}}
	task.KillTimeout = new(time.Second)
	task.Require(&api.Resources{CPU: new(20), MemoryMB: new(16)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)
	var allocID string
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		allocs, _, err := c.Jobs().Allocations("clilife", false, nil)
		if err != nil {
			return err
		}
		if len(allocs) != 1 || allocs[0].ClientStatus != "running" {
			return fmt.Errorf("allocs %v", allocs)
		}
		allocID = allocs[0].ID
		code, out, _ := cli(t, addr, "alloc", "fs", allocID, "main/out.txt")
		if code != 0 || out != "written\n" {
			return fmt.Errorf("out.txt not written yet")
		}
		return nil
	}), wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))

	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"exec output and exit code", []string{"alloc", "exec", "-i=false", allocID[:8], "/bin/sh", "-c", "echo cli; exit 7"}, 7, "cli\n", ""},
		{"exec alias", []string{"exec", "-i=false", "-task", "main", allocID, "echo", "alias"}, 0, "alias\n", ""},
		{"exec unknown task", []string{"alloc", "exec", "-task", "nope", allocID, "true"}, 1, "", "Could not find task named: nope"},
		{"exec needs a command", []string{"alloc", "exec", allocID}, 1, "", "A command is required"},
		{"exec by job", []string{"alloc", "exec", "-i=false", "-job", "clilife", "echo", "by job"}, 0, "by job\n", ""},
		{"exec by job prefix and group", []string{"alloc", "exec", "-i=false", "-job", "-group", "g", "-task", "main", "clil", "echo", "grp"}, 0, "grp\n", ""},
		{"exec by job unknown group", []string{"alloc", "exec", "-job", "-group", "nope", "clilife", "true"}, 1, "", `task group "nope" doesn't exist or it has no allocations`},
		{"exec unknown job", []string{"alloc", "exec", "-job", "nojob", "true"}, 1, "", `No job(s) with prefix or ID "nojob" found`},
		{"exec job needs an ID", []string{"alloc", "exec", "-job"}, 1, "", "A job ID is required"},
		{"exec group needs job", []string{"alloc", "exec", "-group", "g", allocID, "true"}, 1, "", `-group "g" needs -job`},
		{"exec bad escape", []string{"alloc", "exec", "-e", "ab", allocID, "true"}, 1, "", "-e requires 'none' or a single character"},
		{"fs cat", []string{"alloc", "fs", allocID, "main/out.txt"}, 0, "written\n", ""},
		{"fs tail", []string{"alloc", "fs", "-tail", "-c", "4", allocID, "main/out.txt"}, 0, "ten\n", ""},
		{"fs traversal", []string{"alloc", "fs", allocID, "../../etc/passwd"}, 1, "", "escapes the allocation directory"},
		{"signal", []string{"alloc", "signal", "-s", "SIGUSR1", allocID, "main"}, 0, "", ""},
		{"signal unknown task", []string{"alloc", "signal", "-task", "nope", allocID}, 1, "", "Could not find task named: nope"},
		{"restart conflicting flags", []string{"alloc", "restart", "-all-tasks", allocID, "main"}, 1, "", "The -all-tasks option is not allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := cli(t, addr, tc.args...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			if tc.wantOut != "" || tc.wantCode == 0 {
				must.Eq(t, tc.wantOut, out)
			}
			must.StrContains(t, errOut, tc.wantErr)
		})
	}

	// The escape character of a pseudo-terminal session: "~." at a line
	// start closes it, another character can be chosen, "none" passes
	// everything to the task.
	execTTY := func(stdin string, flags ...string) (int, string, string) {
		args := append([]string{"alloc", "exec", "-address", addr, "-t"}, flags...)
		return run(t, stdin, append(args, allocID, "/bin/sh")...)
	}
	code, _, errOut := execTTY("~.\nexit 3\n")
	must.Eq(t, 1, code, must.Sprint(errOut))
	must.StrContains(t, errOut, "Connection closed")
	must.StrContains(t, errOut, "failed to exec into task: context canceled")
	code, _, errOut = execTTY("~.\n#.\nexit 3\n", "-e", "#")
	must.Eq(t, 1, code, must.Sprint(errOut))
	must.StrContains(t, errOut, "Connection closed")
	code, _, errOut = execTTY("~.\nexit 3\n", "-e", "none")
	must.Eq(t, 3, code, must.Sprint(errOut))
	must.StrNotContains(t, errOut, "Connection closed")

	code, out, errOut := cli(t, addr, "alloc", "fs", allocID, "main")
	must.Zero(t, code, must.Sprint(errOut))
	must.StrContains(t, out, "Mode")
	must.StrContains(t, out, "out.txt")

	code, out, errOut = cli(t, addr, "alloc", "fs", "-stat", "-H", allocID, "main/out.txt")
	must.Zero(t, code, must.Sprint(errOut))
	must.StrContains(t, out, "Content Type")
	must.StrContains(t, out, "  8  ")

	code, _, errOut = cli(t, addr, "alloc", "restart", allocID, "main")
	must.Zero(t, code, must.Sprint(errOut))
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		al, _, err := c.Allocations().Info(allocID, nil)
		if err != nil {
			return err
		}
		if ts := al.TaskStates["main"]; ts == nil || ts.Restarts != 1 || ts.State != "running" {
			return fmt.Errorf("task state %+v", ts)
		}
		return nil
	}), wait.Timeout(20*time.Second), wait.Gap(100*time.Millisecond)))

	code, out, errOut = cli(t, addr, "alloc", "stop", "-detach", allocID)
	must.Zero(t, code, must.Sprint(errOut))
	ev, _, err := c.Evaluations().Info(strings.TrimSpace(out), nil)
	must.NoError(t, err)
	must.Eq(t, "alloc-stop", ev.TriggeredBy)
}
