package apiconv

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// smallJob is the one-task mock_driver batch job the HTTP benches
// register, with a little meta, env and config.
func smallJob() *api.Job {
	job := api.NewBatchJob("reg-1", "reg-1", "global", 50)
	job.Datacenters = []string{"*"}
	job.Meta = map[string]string{"team": "batch", "owner": "ops"}
	tg := api.NewTaskGroup("g", 1)
	task := api.NewTask("t", "mock_driver")
	task.Config = map[string]any{"run_for": "1ms", "exit_code": 0, "args": []any{"a", "b"}}
	task.Env = map[string]string{"A": "1", "B": "2"}
	task.Require(&api.Resources{CPU: new(10), MemoryMB: new(10)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// BenchmarkCheck is the check every registration goes through.
func BenchmarkCheck(b *testing.B) {
	job := smallJob()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Check(job); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCheck_CostDoesNotGrowWithTheFieldsLeftUnset: the check looks up each
// api type's field rules once, not per field per job, and does not walk
// into values that cannot hold api structs (config, meta, env). Looking
// the rules up by name each time cost 116 allocations for this job.
func TestCheck_CostDoesNotGrowWithTheFieldsLeftUnset(t *testing.T) {
	job := smallJob()
	if _, err := Check(job); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(50, func() { _, _ = Check(job) }); n > 30 {
		t.Errorf("Check allocates %.0f times for a one-task job; want at most 30", n)
	}
	// Still refuses a refused field inside a block of a list.
	job.TaskGroups[0].Tasks[0].Config["nested"] = map[string]any{"x": 1}
	job.TaskGroups[0].Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http", HostNetwork: "public"}}}}
	if _, err := Check(job); err == nil || !strings.Contains(err.Error(), `"Networks[0].DynamicPorts[0].HostNetwork"`) {
		t.Errorf("a host_network inside a group's network port: %v, want it refused by name", err)
	}
}
