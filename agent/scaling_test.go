package agent

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestScalingPolicies: a group's scaling block is served as a policy with
// a stable ID, and its bounds are enforced on scale and on registration.
func TestScalingPolicies(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	policies, _, err := c.Scaling().ListPolicies(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, policies)

	job := api.NewServiceJob("sc", "sc", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("web", 1)
	task := api.NewTask("t", "mock_driver")
	task.Config = map[string]any{"run_for": "1h"}
	task.Require(&api.Resources{CPU: new(20), MemoryMB: new(16)})
	tg.AddTask(task)
	tg.Scaling = &api.ScalingPolicy{Min: new(int64(1)), Max: new(int64(3)), Policy: map[string]any{"cooldown": "1m", "n": 2}}
	job.AddTaskGroup(tg)
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)

	policies, _, err = c.Scaling().ListPolicies(nil)
	must.NoError(t, err)
	must.Len(t, 1, policies)
	id := policies[0].ID
	must.Eq(t, map[string]string{"Namespace": "default", "Job": "sc", "Group": "web"}, policies[0].Target)
	must.True(t, policies[0].Enabled)
	p, _, err := c.Scaling().GetPolicy(id, nil)
	must.NoError(t, err)
	must.Eq(t, int64(3), *p.Max)
	must.Eq(t, "1m", p.Policy["cooldown"])
	_, _, err = c.Scaling().GetPolicy(id, &api.QueryOptions{Namespace: "other"})
	must.ErrorContains(t, err, "404", must.Sprint("a policy is read in its own namespace"))

	_, _, err = c.Jobs().Scale("sc", "web", new(5), "too many", false, nil, nil)
	must.ErrorContains(t, err, "group count was greater than scaling policy maximum: 5 > 3")
	_, _, err = c.Jobs().Scale("sc", "web", new(0), "too few", false, nil, nil)
	must.ErrorContains(t, err, "group count was less than scaling policy minimum: 0 < 1")
	_, _, err = c.Jobs().Scale("sc", "web", new(2), "ok", false, nil, nil)
	must.NoError(t, err)

	// A new version keeps the policy's ID; a count outside the bounds is
	// refused at registration.
	job.Meta = map[string]string{"v": "2"}
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)
	policies, _, err = c.Scaling().ListPolicies(nil)
	must.NoError(t, err)
	must.Eq(t, id, policies[0].ID)
	job.TaskGroups[0].Count = new(4)
	_, _, err = c.Jobs().Register(job, nil)
	must.ErrorContains(t, err, "task group count 4 must not be greater than maximum count 3 in scaling policy")

	// The policy goes with its job.
	_, _, err = c.Jobs().Deregister("sc", true, nil)
	must.NoError(t, err)
	policies, _, err = c.Scaling().ListPolicies(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, policies)
}
