package agent

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/client/drivers/executor"
	"github.com/nomadq/nomadq/structs"
)

// Acceptance tests of issue 17's "take effect" fields: each runs real
// raw_exec tasks on a real agent and reads what the task saw.

// envJob is a batch job of count allocs of one raw_exec task that prints
// the given variables as name=value lines and exits.
func envJob(id string, count int, vars ...string) *api.Job {
	var script strings.Builder
	for _, v := range vars {
		fmt.Fprintf(&script, `echo "%s=$%s"; `, v, v)
	}
	job := api.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", count)
	tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	tg.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	tg.AddTask(shTask("main", script.String()))
	job.AddTaskGroup(tg)
	return job
}

// taskVars parses name=value lines of a task's stdout.
func taskVars(t *testing.T, a *Agent, allocID string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(taskLog(t, a, allocID, "main"), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out
}

func completeAllocs(t *testing.T, c *api.Client, jobID string, n int) []*api.Allocation {
	t.Helper()
	stubs := jobAllocs(t, c, jobID, n, 60*time.Second, isTerminal)
	var out []*api.Allocation
	for _, s := range stubs {
		a, _, err := c.Allocations().Info(s.ID, nil)
		must.NoError(t, err)
		must.Eq(t, "complete", a.ClientStatus, must.Sprintf("alloc %s: %v", a.ID, a.TaskStates))
		out = append(out, a)
	}
	return out
}

// failedPlacement returns the placement failure of the job's group "g"
// recorded on its latest evaluation.
func failedPlacement(t *testing.T, c *api.Client, jobID string) *api.AllocationMetric {
	t.Helper()
	evals, _, err := c.Jobs().Evaluations(jobID, nil)
	must.NoError(t, err)
	for _, e := range evals {
		if m := e.FailedTGAllocs["g"]; m != nil {
			return m
		}
	}
	t.Fatalf("no evaluation of %s records a placement failure", jobID)
	return nil
}

func TestJobFields_DynamicPortsDifferAcrossAllocs(t *testing.T) {
	a := NewTestAgent(t, func(cfg *config.Config) {
		cfg.Client.MinDynamicPort, cfg.Client.MaxDynamicPort = 23100, 23199
	})
	c := apiClient(t, a)
	job := envJob("ports", 2, "NOMAD_PORT_http", "NOMAD_IP_http", "NOMAD_ADDR_http", "NOMAD_HOST_PORT_http", "NOMAD_ALLOC_PORT_http")
	job.TaskGroups[0].Networks = []*api.NetworkResource{{Mode: "host", DynamicPorts: []api.Port{{Label: "http"}}}}
	register(t, c, job)

	seen := map[string]bool{}
	for _, alloc := range completeAllocs(t, c, "ports", 2) {
		env := taskVars(t, a, alloc.ID)
		port := env["NOMAD_PORT_http"]
		p, err := strconv.Atoi(port)
		must.NoError(t, err, must.Sprintf("env %v", env))
		must.Between(t, 23100, p, 23199)
		must.False(t, seen[port], must.Sprintf("port %s given to two allocs", port))
		seen[port] = true
		must.Eq(t, "127.0.0.1", env["NOMAD_IP_http"])
		must.Eq(t, "127.0.0.1:"+port, env["NOMAD_ADDR_http"])
		must.Eq(t, port, env["NOMAD_HOST_PORT_http"])
		must.Eq(t, port, env["NOMAD_ALLOC_PORT_http"])

		shared := alloc.AllocatedResources.Shared
		must.Eq(t, []api.PortMapping{{Label: "http", Value: p, HostIP: "127.0.0.1"}}, shared.Ports)
		must.Len(t, 1, shared.Networks)
		must.Eq(t, p, shared.Networks[0].DynamicPorts[0].Value)
	}
}

func TestJobFields_StaticPortCollisionBlocksPlacement(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	static := func(id string) *api.Job {
		job := maxRunJob(id, "batch", time.Hour, "sleep 60")
		job.TaskGroups[0].MaxRunDuration = nil
		job.TaskGroups[0].Networks = []*api.NetworkResource{{ReservedPorts: []api.Port{{Label: "http", Value: 24567}}}}
		return job
	}
	register(t, c, static("holder"))
	holder := onlyAlloc(t, c, "holder", isRunning)
	must.Eq(t, 24567, holder.AllocatedResources.Shared.Ports[0].Value)

	register(t, c, static("second"))
	m := failedPlacement(t, c, "second")
	must.Eq(t, 1, m.DimensionExhausted["network: reserved port collision http=24567"], must.Sprintf("%+v", m))
	allocs, _, err := c.Jobs().Allocations("second", true, nil)
	must.NoError(t, err)
	must.SliceEmpty(t, allocs)
}

func TestJobFields_CoresReservedApart(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two cores")
	}
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	job := envJob("cores", 2, "NOMAD_CPU_CORES", "NOMAD_CPU_LIMIT")
	job.TaskGroups[0].Tasks[0].Resources = &api.Resources{Cores: new(1), MemoryMB: new(16)}
	// Pinned or not, the task reports which CPUs it may run on.
	job.TaskGroups[0].Tasks[0].Config["args"] = []string{"-c", `echo "NOMAD_CPU_CORES=$NOMAD_CPU_CORES"; ` +
		`echo "NOMAD_CPU_LIMIT=$NOMAD_CPU_LIMIT"; echo "allowed=$(grep Cpus_allowed_list /proc/self/status | cut -f2)"`}
	register(t, c, job)

	node, _, err := c.Nodes().Info(a.Client().NodeID(), nil)
	must.NoError(t, err)
	perCore := node.NodeResources.Cpu.CpuShares / int64(node.NodeResources.Cpu.TotalCpuCores)
	seen := map[string]bool{}
	for _, alloc := range completeAllocs(t, c, "cores", 2) {
		env := taskVars(t, a, alloc.ID)
		cores := env["NOMAD_CPU_CORES"]
		must.NotEq(t, "", cores)
		must.False(t, seen[cores], must.Sprintf("core %s reserved twice", cores))
		seen[cores] = true
		must.Eq(t, strconv.FormatInt(perCore, 10), env["NOMAD_CPU_LIMIT"])
		must.Eq(t, perCore, int64(*alloc.TaskResources["main"].CPU))
		must.Eq(t, 1, *alloc.TaskResources["main"].Cores)
		if executor.CgroupsUsable() == nil {
			must.Eq(t, cores, env["allowed"])
		}
	}
}

// killEvents waits for the job's one alloc to end and returns the times
// of the main task's events by type (the first of each).
func killEvents(t *testing.T, c *api.Client, jobID string) map[string]time.Time {
	t.Helper()
	alloc := onlyAlloc(t, c, jobID, isTerminal)
	at := map[string]time.Time{}
	var order []string
	for _, e := range alloc.TaskStates["main"].Events {
		if _, ok := at[e.Type]; !ok {
			at[e.Type] = time.Unix(0, e.Time)
			order = append(order, e.Type)
		}
	}
	t.Logf("events: %v", order)
	return at
}

func TestJobFields_ShutdownDelay(t *testing.T) {
	const delay = 2 * time.Second
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	cases := []struct {
		name  string
		set   func(tg *api.TaskGroup)
		start string // the event the delay is counted from
	}{
		{"task", func(tg *api.TaskGroup) { tg.Tasks[0].ShutdownDelay = delay }, structs.TaskKilling},
		{"group", func(tg *api.TaskGroup) { tg.ShutdownDelay = new(delay) }, structs.TaskWaitingShuttingDownDelay},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id := "delay-" + tc.name
			job := maxRunJob(id, "batch", time.Hour, "while true; do sleep 0.1; done")
			job.TaskGroups[0].MaxRunDuration = nil
			tc.set(job.TaskGroups[0])
			register(t, c, job)
			onlyAlloc(t, c, id, isRunning)
			_, _, err := c.Jobs().Deregister(id, false, nil)
			must.NoError(t, err)

			at := killEvents(t, c, id)
			for _, typ := range []string{structs.TaskWaitingShuttingDownDelay, structs.TaskKilling, structs.TaskKilled} {
				must.MapContainsKey(t, at, typ)
			}
			must.False(t, at[structs.TaskKilled].Before(at[tc.start].Add(delay)),
				must.Sprintf("killed %s after %s, before the %s delay", at[structs.TaskKilled].Sub(at[tc.start]), tc.start, delay))
			// Generous ceiling: the kill follows the delay, not a timeout.
			must.True(t, at[structs.TaskKilled].Before(at[tc.start].Add(delay+30*time.Second)))
		})
	}
}

// job stop and alloc stop with no_shutdown_delay skip the group's and
// the task's delay, as in Nomad.
func TestJobFields_NoShutdownDelay(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	cases := []struct {
		name string
		stop func(t *testing.T, id string, alloc *api.Allocation)
	}{
		{"job stop", func(t *testing.T, id string, _ *api.Allocation) {
			_, _, err := c.Jobs().DeregisterOpts(id, &api.DeregisterOptions{NoShutdownDelay: true}, nil)
			must.NoError(t, err)
		}},
		{"alloc stop", func(t *testing.T, _ string, alloc *api.Allocation) {
			_, err := c.Allocations().Stop(alloc, &api.QueryOptions{Params: map[string]string{"no_shutdown_delay": "true"}})
			must.NoError(t, err)
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id := fmt.Sprintf("no-delay-%d", i)
			job := maxRunJob(id, "batch", time.Hour, "while true; do sleep 0.1; done")
			job.TaskGroups[0].MaxRunDuration = nil
			// Delays long enough to see, short enough that a failure
			// does not hold the agent's shutdown for long.
			job.TaskGroups[0].ShutdownDelay = new(20 * time.Second)
			job.TaskGroups[0].Tasks[0].ShutdownDelay = 20 * time.Second
			register(t, c, job)
			alloc := onlyAlloc(t, c, id, isRunning)
			tc.stop(t, id, alloc)
			// An alloc stop places a replacement: stop it without delay
			// too, so the agent's shutdown does not wait for it.
			t.Cleanup(func() { _, _, _ = c.Jobs().DeregisterOpts(id, &api.DeregisterOptions{NoShutdownDelay: true}, nil) })
			at := map[string]time.Time{}
			must.Wait(t, wait.InitialSuccess(wait.Timeout(60*time.Second), wait.Gap(200*time.Millisecond), wait.TestFunc(func() (bool, error) {
				got, _, err := c.Allocations().Info(alloc.ID, nil)
				if err != nil {
					return false, err
				}
				ts := got.TaskStates["main"]
				if ts == nil || ts.State != structs.TaskStateDead {
					return false, fmt.Errorf("main is %v", ts)
				}
				for _, e := range ts.Events {
					at[e.Type] = time.Unix(0, e.Time)
				}
				return true, nil
			})))
			must.MapContainsKey(t, at, structs.TaskKilled)
			must.MapNotContainsKey(t, at, structs.TaskWaitingShuttingDownDelay, must.Sprintf("events: %v", at))
		})
	}
}

// The group's shutdown_delay holds the kill that a failed sibling
// causes, as it holds a stop.
func TestJobFields_GroupShutdownDelayWhenSiblingFails(t *testing.T) {
	const delay = 2 * time.Second
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	id := "delay-sibling"
	job := maxRunJob(id, "batch", time.Hour, "while true; do sleep 0.1; done")
	tg := job.TaskGroups[0]
	tg.MaxRunDuration = nil
	tg.ShutdownDelay = new(delay)
	tg.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	tg.AddTask(shTask("bad", "sleep 1; exit 3"))
	register(t, c, job)

	// The alloc fails with "bad"; "main" lives on for the delay.
	at := map[string]time.Time{}
	must.Wait(t, wait.InitialSuccess(wait.Timeout(60*time.Second), wait.Gap(200*time.Millisecond), wait.TestFunc(func() (bool, error) {
		stubs, _, err := c.Jobs().Allocations(id, false, nil)
		if err != nil || len(stubs) != 1 {
			return false, err
		}
		ts := stubs[0].TaskStates["main"]
		if ts == nil || ts.State != structs.TaskStateDead {
			return false, fmt.Errorf("main is %v", ts)
		}
		for _, e := range ts.Events {
			if _, ok := at[e.Type]; !ok {
				at[e.Type] = time.Unix(0, e.Time)
			}
		}
		return true, nil
	})))
	for _, typ := range []string{structs.TaskSiblingFailed, structs.TaskWaitingShuttingDownDelay, structs.TaskKilling, structs.TaskKilled} {
		must.MapContainsKey(t, at, typ)
	}
	waited := at[structs.TaskKilling].Sub(at[structs.TaskWaitingShuttingDownDelay])
	must.GreaterEq(t, delay, waited, must.Sprintf("killed %s after the delay began, before the %s delay", waited, delay))
	// Generous ceiling: the kill follows the delay, not a timeout.
	must.Less(t, delay+30*time.Second, waited)
}

// kill_signal reaches the task on every way an alloc is stopped that
// exists so far (alloc stop and node drain arrive with their own
// endpoints and go through the same alloc runner kill).
func TestJobFields_KillSignalOnEveryStopPath(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	dir := t.TempDir()
	cases := []struct {
		name   string
		limit  time.Duration // max_run_duration; 0 for none
		stopIt func(t *testing.T, jobID string)
	}{
		{"job stop", 0, func(t *testing.T, id string) {
			_, _, err := c.Jobs().Deregister(id, false, nil)
			must.NoError(t, err)
		}},
		{"max_run_duration", 3 * time.Second, func(*testing.T, string) {}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id := fmt.Sprintf("signal-%d", i)
			mark := filepath.Join(dir, id)
			script := fmt.Sprintf(`trap 'echo got-usr1 > %s; exit 0' USR1; while true; do sleep 0.1; done`, mark)
			job := maxRunJob(id, "batch", time.Hour, script)
			job.TaskGroups[0].MaxRunDuration = nil
			if tc.limit > 0 {
				job.TaskGroups[0].MaxRunDuration = new(tc.limit)
			}
			job.TaskGroups[0].Tasks[0].KillSignal = "SIGUSR1"
			job.TaskGroups[0].Tasks[0].KillTimeout = new(20 * time.Second)
			register(t, c, job)
			if tc.limit == 0 {
				// Stopped from outside: only once the task runs (and
				// has set its trap). A deadline stops it by itself, and
				// under load the whole run can fall between two polls
				// of the alloc, so that case waits for the end only.
				onlyAlloc(t, c, id, isRunning)
			}
			tc.stopIt(t, id)
			onlyAlloc(t, c, id, isTerminal)
			b, err := os.ReadFile(mark)
			must.NoError(t, err, must.Sprint("the task never saw SIGUSR1"))
			must.Eq(t, "got-usr1\n", string(b))
		})
	}
}

func TestJobFields_HostVolume(t *testing.T) {
	shared := t.TempDir()
	must.NoError(t, os.WriteFile(filepath.Join(shared, "hello"), []byte("from the host\n"), 0o644))
	a := NewTestAgent(t, func(cfg *config.Config) {
		cfg.Client.HostVolumes = []*structs.ClientHostVolumeConfig{{Name: "shared", Path: shared, ReadOnly: true}}
	})
	c := apiClient(t, a)

	node, _, err := c.Nodes().Info(a.Client().NodeID(), nil)
	must.NoError(t, err)
	must.Eq(t, shared, node.HostVolumes["shared"].Path)
	must.True(t, node.HostVolumes["shared"].ReadOnly)

	withVolume := func(id, source string) *api.Job {
		job := envJob(id, 1, "NOMAD_VOLUME_data")
		job.TaskGroups[0].Tasks[0].Config["args"] = []string{"-c", `echo "NOMAD_VOLUME_data=$NOMAD_VOLUME_data"; echo "content=$(cat $NOMAD_VOLUME_data/hello)"`}
		job.TaskGroups[0].Volumes = map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host", Source: source, ReadOnly: true}}
		job.TaskGroups[0].Tasks[0].VolumeMounts = []*api.VolumeMount{{Volume: new("data"), Destination: new("/data")}}
		return job
	}

	t.Run("present", func(t *testing.T) {
		register(t, c, withVolume("vol", "shared"))
		alloc := completeAllocs(t, c, "vol", 1)[0]
		env := taskVars(t, a, alloc.ID)
		// raw_exec cannot mount: the task finds the host path.
		must.Eq(t, shared, env["NOMAD_VOLUME_data"])
		must.Eq(t, "from the host", env["content"])
	})
	t.Run("missing", func(t *testing.T) {
		register(t, c, withVolume("novol", "nope"))
		m := failedPlacement(t, c, "novol")
		must.Eq(t, 1, m.ConstraintFiltered["missing compatible host volumes"], must.Sprintf("%+v", m))
	})
}

func TestJobFields_LogsDisabled(t *testing.T) {
	data := t.TempDir()
	a := NewTestAgent(t, func(cfg *config.Config) { cfg.DataDir = data })
	c := apiClient(t, a)
	job := envJob("nolog", 1, "NOMAD_ALLOC_ID")
	job.TaskGroups[0].Tasks[0].LogConfig = &api.LogConfig{Disabled: new(true)}
	register(t, c, job)
	alloc := completeAllocs(t, c, "nolog", 1)[0]

	logs, err := os.ReadDir(filepath.Join(data, "alloc", alloc.ID, "alloc", "logs"))
	must.NoError(t, err)
	for _, f := range logs {
		must.False(t, strings.HasPrefix(f.Name(), "main."), must.Sprintf("log file %s written", f.Name()))
	}
	resp, err := http.Get(fmt.Sprintf("%s/v1/client/fs/logs/%s?task=main&type=stdout&plain=true", a.HTTPAddr(), alloc.ID))
	must.NoError(t, err)
	defer resp.Body.Close()
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
}

// Fields that cannot take effect are refused at registration, naming
// the field.
func TestJobFields_Refused(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	cases := []struct {
		name   string
		change func(tg *api.TaskGroup)
		want   string
	}{
		{"unknown network mode", func(tg *api.TaskGroup) { tg.Networks = []*api.NetworkResource{{Mode: "bridgee"}} },
			`network mode "bridgee" is not allowed: must be host, bridge, none or cni/<name>`},
		{"network device", func(tg *api.TaskGroup) {
			tg.Networks = []*api.NetworkResource{{Device: "eth0", DynamicPorts: []api.Port{{Label: "http", To: 8080}}}}
		}, `field "Networks[0].Device" is not supported by nomadq`},
		{"memory_max without oversubscription", func(tg *api.TaskGroup) {
			tg.Tasks[0].Resources.MemoryMaxMB = new(512)
		}, `resources memory_max 512 is not allowed: memory oversubscription is disabled`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := envJob("refused", 1, "X")
			tc.change(job.TaskGroups[0])
			_, _, err := c.Jobs().Register(job, nil)
			must.ErrorContains(t, err, tc.want)
			must.ErrorContains(t, err, "400")
		})
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		jobs, _, err := c.Jobs().List(nil)
		return err == nil && len(jobs) == 0
	}), wait.Timeout(time.Second)))
}

// exec bind-mounts a host volume into the chroot at its destination,
// read-only when the mount says so.
func TestJobFields_HostVolumeExecMount(t *testing.T) {
	if err := executor.CgroupsUsable(); err != nil {
		t.Skipf("exec needs root and cgroups: %v", err)
	}
	shared := t.TempDir()
	must.NoError(t, os.WriteFile(filepath.Join(shared, "hello"), []byte("from the host\n"), 0o644))
	must.NoError(t, os.Chmod(shared, 0o777))
	a := NewTestAgent(t, func(cfg *config.Config) {
		cfg.Client.HostVolumes = []*structs.ClientHostVolumeConfig{{Name: "shared", Path: shared}}
	})
	c := apiClient(t, a)
	cases := []struct {
		name      string
		readOnly  bool
		wantWrite string
	}{
		{"read-write", false, "write=ok"},
		{"read-only", true, "write=refused"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("execvol-%d", i)
			script := `echo "volume=$NOMAD_VOLUME_data"; echo "content=$(cat /data/hello)"; ` +
				fmt.Sprintf(`if echo x > /data/written-%d 2>/dev/null; then echo write=ok; else echo write=refused; fi`, i)
			job := execJob(id, execTask("main", script, 64), 0)
			job.TaskGroups[0].Volumes = map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared"}}
			job.TaskGroups[0].Tasks[0].VolumeMounts = []*api.VolumeMount{{Volume: new("data"), Destination: new("/data"), ReadOnly: new(tc.readOnly)}}
			register(t, c, job)
			alloc := onlyAlloc(t, c, id, isTerminal)
			out := taskLog(t, a, alloc.ID, "main")
			must.Eq(t, "complete", alloc.ClientStatus, must.Sprint(out))
			must.StrContains(t, out, "volume=/data\n")
			must.StrContains(t, out, "content=from the host\n")
			must.StrContains(t, out, tc.wantWrite+"\n")
			_, err := os.Stat(filepath.Join(shared, fmt.Sprintf("written-%d", i)))
			must.Eq(t, !tc.readOnly, err == nil)
		})
	}
}
