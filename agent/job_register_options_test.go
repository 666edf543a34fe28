package agent

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

// RegisterOptions.PreserveCounts and PreserveResources keep what the
// stored job has for the groups and tasks it already has, and a
// deregister's eval_priority reaches the eval; all three were accepted
// and dropped before.
func TestJobs_RegisterAndDeregisterOptions(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	jobs := c.Jobs()

	job := mockJob("preserve", 0)
	job.TaskGroups[0].Count = new(2)
	_, _, err := jobs.Register(job, nil)
	must.NoError(t, err)

	// Each case registers on top of the one before.
	cases := []struct {
		name               string
		opts               api.RegisterOptions
		sendCount, sendCPU int
		wantCount, wantCPU int
	}{
		{"neither", api.RegisterOptions{}, 5, 50, 5, 50},
		{"counts", api.RegisterOptions{PreserveCounts: true}, 8, 77, 5, 77},
		{"resources", api.RegisterOptions{PreserveResources: true}, 9, 60, 9, 77},
		{"both", api.RegisterOptions{PreserveCounts: true, PreserveResources: true}, 10, 61, 9, 77},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			edited := mockJob("preserve", 0)
			edited.TaskGroups[0].Count = new(tc.sendCount)
			edited.TaskGroups[0].Tasks[0].Resources.CPU = new(tc.sendCPU)
			extra := api.NewTaskGroup("new", 3)
			extra.AddTask(api.NewTask("t", "mock_driver").Require(&api.Resources{CPU: new(20), MemoryMB: new(32)}))
			edited.AddTaskGroup(extra)
			_, _, err := jobs.RegisterOpts(edited, &tc.opts, nil)
			must.NoError(t, err)

			status, _, err := jobs.ScaleStatus("preserve", nil)
			must.NoError(t, err)
			must.Eq(t, tc.wantCount, status.TaskGroups["g"].Desired)
			must.Eq(t, 3, status.TaskGroups["new"].Desired) // new groups take the file's count
			got, _, err := jobs.Info("preserve", nil)
			must.NoError(t, err)
			must.Eq(t, tc.wantCPU, *got.TaskGroups[0].Tasks[0].Resources.CPU)
			must.Eq(t, 20, *got.TaskGroups[1].Tasks[0].Resources.CPU)
		})
	}

	evalID, _, err := jobs.DeregisterOpts("preserve", &api.DeregisterOptions{EvalPriority: 97}, nil)
	must.NoError(t, err)
	eval, _, err := c.Evaluations().Info(evalID, nil)
	must.NoError(t, err)
	must.Eq(t, 97, eval.Priority)
}

// Listings of nothing answer index 0, as Nomad's do.
func TestEmptyListings_IndexZero(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, a)

	evals, qm, err := c.Evaluations().List(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, evals)
	must.Eq(t, uint64(0), qm.LastIndex)

	allocs, qm, err := c.Evaluations().Allocations("8E231CF4-CA48-43FF-B694-5801E69E22FA", nil)
	must.NoError(t, err)
	must.SliceEmpty(t, allocs)
	must.Eq(t, uint64(0), qm.LastIndex)

	jallocs, qm, err := c.Jobs().Allocations("job1", true, nil)
	must.NoError(t, err)
	must.SliceEmpty(t, jallocs)
	must.Eq(t, uint64(0), qm.LastIndex)

	jevals, qm, err := c.Jobs().Evaluations("job1", nil)
	must.NoError(t, err)
	must.SliceEmpty(t, jevals)
	must.Eq(t, uint64(0), qm.LastIndex)
}
