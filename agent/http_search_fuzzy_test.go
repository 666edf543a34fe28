package agent

import (
	"net/http"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/api/contexts"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

func fuzzyJob(id string) *api.Job {
	job := api.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("group1", 1)
	task := api.NewTask("task1", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sleep", "args": []string{"30"}}
	task.Require(&api.Resources{CPU: new(100), MemoryMB: new(64)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

func TestSearch_Fuzzy(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	job := fuzzyJob("binary-cruncher")
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	_, _, err = c.Jobs().Register(fuzzyJob("other"), nil)
	must.NoError(t, err)

	resp, qm, err := c.Search().FuzzySearch("bin", contexts.All, nil)
	must.NoError(t, err)
	must.Positive(t, qm.LastIndex)
	cmds := resp.Matches[contexts.Commands]
	must.Len(t, 2, cmds)
	must.Eq(t, "/bin/sleep", cmds[0].ID)
	must.Eq(t, []string{"default", "binary-cruncher", "group1", "task1"}, cmds[0].Scope)
	jobs := resp.Matches[contexts.Jobs]
	must.Len(t, 1, jobs)
	must.Eq(t, api.FuzzyMatch{ID: "binary-cruncher", Scope: []string{"default", "binary-cruncher"}}, jobs[0])
	must.False(t, resp.Truncations[contexts.Jobs])

	// Case does not matter; groups and tasks carry their scope.
	resp, _, err = c.Search().FuzzySearch("TASK", contexts.Jobs, nil)
	must.NoError(t, err)
	must.Len(t, 2, resp.Matches[contexts.Tasks])
	must.Eq(t, []string{"default", "binary-cruncher", "group1"}, resp.Matches[contexts.Tasks][0].Scope)

	// Nodes match by name, with their ID as scope.
	node, _, err := c.Nodes().Info(a.client.NodeID(), nil)
	must.NoError(t, err)
	resp, _, err = c.Search().FuzzySearch(node.Name, contexts.Nodes, nil)
	must.NoError(t, err)
	must.Eq(t, []api.FuzzyMatch{{ID: node.Name, Scope: []string{node.ID}}}, resp.Matches[contexts.Nodes])

	_, _, err = c.Search().FuzzySearch("b", contexts.All, nil)
	must.ErrorContains(t, err, "400 (fuzzy search query must be at least 2 characters, got 1)")
	_, _, err = c.Search().FuzzySearch("bin", "nope", nil)
	must.ErrorContains(t, err, "400")
	must.Eq(t, http.StatusMethodNotAllowed, doRaw(t, a, http.MethodGet, "/v1/search/fuzzy", "").StatusCode)
}

func TestSearch_FuzzySortsByPositionThenLength(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, a)
	for _, id := range []string{"xx-web", "web-long", "web", "a-web"} {
		_, _, err := c.Jobs().Register(fuzzyJob(id), nil)
		must.NoError(t, err)
	}
	resp, _, err := c.Search().FuzzySearch("web", contexts.Jobs, nil)
	must.NoError(t, err)
	var ids []string
	for _, m := range resp.Matches[contexts.Jobs] {
		ids = append(ids, m.ID)
	}
	must.Eq(t, []string{"web", "web-long", "a-web", "xx-web"}, ids)
}
