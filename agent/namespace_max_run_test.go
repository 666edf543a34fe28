package agent

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// Namespace meta sets a default and a ceiling for max_run_duration; the
// servers apply them when a batch job is registered.
func TestNamespaceMaxRunDuration(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	_, err := c.Namespaces().Register(&api.Namespace{Name: "bad", Meta: map[string]string{"max_run_duration_max": "soon"}}, nil)
	must.ErrorContains(t, err, `meta max_run_duration_max "soon" is not a duration`)
	must.ErrorContains(t, err, "400")
	ns, _, err := c.Namespaces().Info("bad", nil)
	must.Error(t, err, must.Sprintf("a refused namespace is stored: %+v", ns))

	_, err = c.Namespaces().Register(&api.Namespace{Name: "ml", Meta: map[string]string{
		"max_run_duration_default": "3s", "max_run_duration_max": "1h",
	}}, nil)
	must.NoError(t, err)
	q := &api.WriteOptions{Namespace: "ml"}
	qq := &api.QueryOptions{Namespace: "ml"}

	t.Run("a batch job without a limit gets the default and is ended by it", func(t *testing.T) {
		job := maxRunJob("defaulted", "batch", 0, "exec sleep 600")
		job.Namespace = new("ml")
		job.TaskGroups[0].MaxRunDuration = nil
		resp, _, err := c.Jobs().Register(job, q)
		must.NoError(t, err)
		waitEvalTerminal(t, c, resp.EvalID)
		stored, _, err := c.Jobs().Info("defaulted", qq)
		must.NoError(t, err)
		must.NotNil(t, stored.TaskGroups[0].MaxRunDuration)
		must.Eq(t, 3*time.Second, *stored.TaskGroups[0].MaxRunDuration)
		waitFor(t, 30*time.Second, func() error {
			allocs, _, err := c.Jobs().Allocations("defaulted", true, qq)
			if err != nil {
				return err
			}
			if len(allocs) != 1 || !isTerminal(allocs[0]) {
				return fmt.Errorf("allocs: %v", maxRunSummary(allocs))
			}
			must.Eq(t, "complete", allocs[0].ClientStatus)
			must.Eq(t, maxRunReason, allocs[0].ClientDescription)
			return nil
		})
	})

	t.Run("a service job is untouched", func(t *testing.T) {
		job := serviceJob("web", "exec sleep 600", &api.Service{Name: "web", PortLabel: "http", Provider: "nomad"})
		job.Namespace = new("ml")
		_, _, err := c.Jobs().Register(job, q)
		must.NoError(t, err)
		stored, _, err := c.Jobs().Info("web", qq)
		must.NoError(t, err)
		must.Nil(t, stored.TaskGroups[0].MaxRunDuration)
	})

	t.Run("a batch job above the ceiling is refused", func(t *testing.T) {
		job := maxRunJob("greedy", "batch", 2*time.Hour, "exec sleep 600")
		job.Namespace = new("ml")
		_, _, err := c.Jobs().Register(job, q)
		must.ErrorContains(t, err, `Task group "g": max_run_duration 2h0m0s is above the ceiling of namespace "ml" (meta max_run_duration_max = 1h0m0s)`)
		_, _, err = c.Jobs().Info("greedy", qq)
		must.ErrorContains(t, err, "404")
	})
}

// A unitless max_run_duration is nanoseconds; below a second the API
// refuses it, suggesting the unit.
func TestMaxRunDuration_BareNumberRefused(t *testing.T) {
	a := NewTestAgent(t, nil)
	job := maxRunJob("nanos", "batch", 600, "exit 0")
	code, out := putJob(t, a, "/v1/jobs", map[string]any{"Job": job})
	must.Eq(t, http.StatusBadRequest, code)
	must.StrContains(t, out, `Task group "g": max_run_duration 600 is 600ns; did you mean "600s"?`)
	code, _ = getBody(t, a, "/v1/job/nanos")
	must.Eq(t, http.StatusNotFound, code)
}
