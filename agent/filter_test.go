package agent

import (
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/structs"
)

// unplaceableJob is a job no node can take, so its status and evaluations
// stay put while the test reads them.
func unplaceableJob(id, typ string, meta map[string]string) *api.Job {
	job := mockJob(id, 1)
	job.Type = new(typ)
	job.Datacenters = []string{"nowhere"}
	job.Meta = meta
	return job
}

// listed calls a list endpoint of the official client and returns one
// string per item, never nil.
func listed[T any](list func(*api.QueryOptions) ([]T, *api.QueryMeta, error), q *api.QueryOptions, key func(T) string) ([]string, error) {
	items, _, err := list(q)
	out := []string{}
	for _, it := range items {
		out = append(out, key(it))
	}
	return out, err
}

// TestFilter_Lists runs Nomad's filter expressions through the official
// client on every list that takes one. Selectors name the fields of the
// object Nomad evaluates (the whole job, allocation, node, evaluation),
// not only those of the list stub.
func TestFilter_Lists(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	for _, j := range []*api.Job{
		unplaceableJob("xa", "batch", map[string]string{"foo": "bar"}),
		unplaceableJob("xb", "batch", nil),
		unplaceableJob("yc", "service", map[string]string{"foo": "baz"}),
	} {
		_, _, err := c.Jobs().Register(j, nil)
		must.NoError(t, err)
	}
	_, _, err := c.Jobs().Deregister("xb", false, nil)
	must.NoError(t, err)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		j, _, err := c.Jobs().Info("xb", nil)
		return err == nil && *j.Status == "dead"
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))

	// A job that runs, for the allocation list.
	_, _, err = c.Jobs().Register(mockJob("run", 1), nil)
	must.NoError(t, err)
	allocOf(t, c, "run", 10*time.Second)

	jobIDs := func(q *api.QueryOptions) ([]string, error) {
		ids, err := listed(c.Jobs().List, q, func(s *api.JobListStub) string { return s.ID })
		return slices.DeleteFunc(ids, func(id string) bool { return id == "run" }), err
	}
	allocJobs := func(q *api.QueryOptions) ([]string, error) {
		return listed(c.Allocations().List, q, func(s *api.AllocationListStub) string { return s.JobID })
	}
	evalJobs := func(q *api.QueryOptions) ([]string, error) {
		ids, err := listed(c.Evaluations().List, q, func(e *api.Evaluation) string { return e.JobID })
		slices.Sort(ids)
		return slices.Compact(ids), err
	}
	nodeIDs := func(q *api.QueryOptions) ([]string, error) {
		return listed(c.Nodes().List, q, func(n *api.NodeListStub) string { return n.ID })
	}

	cases := []struct {
		name   string
		list   func(*api.QueryOptions) ([]string, error)
		filter string
		want   []string
		errMsg string
	}{
		{"matches", jobIDs, `Name matches "^x"`, []string{"xa", "xb"}, ""},
		{"key in map", jobIDs, `"foo" in Meta`, []string{"xa", "yc"}, ""},
		{"map value", jobIDs, `Meta.foo == "bar"`, []string{"xa"}, ""},
		{"and", jobIDs, `Status != "dead" and Type == "batch"`, []string{"xa"}, ""},
		{"field of the job, not the stub", jobIDs, `TaskGroups is not empty`, []string{"xa", "xb", "yc"}, ""},
		{"slice index", jobIDs, `TaskGroups.0.Name == "g" and Type == "service"`, []string{"yc"}, ""},
		{"not and parentheses", jobIDs, `not (Type == "service" or Stop == true)`, []string{"xa"}, ""},
		{"number", jobIDs, `Priority == 50 and ID != "xb"`, []string{"xa", "yc"}, ""},
		{"unknown selector", jobIDs, `Nope == "x"`, nil, `"Nope"`},
		{"selector through a slice", jobIDs, `TaskGroups.Name == "g"`, nil, `/TaskGroups/Name`},
		{"wrong value type", jobIDs, `Priority == "high"`, nil, `"high"`},
		{"bad regexp", jobIDs, `Name matches "[["`, nil, `[[`},
		{"syntax", jobIDs, `ID ==`, nil, `1:6`},
		{"alloc's job", allocJobs, `Job.Name == "run" and TaskGroup == "g"`, []string{"run"}, ""},
		{"alloc unknown selector", allocJobs, `JobType == "batch"`, nil, `"JobType"`},
		{"evals", evalJobs, `TriggeredBy == "job-register" and JobID matches "^x"`, []string{"xa", "xb"}, ""},
		{"nodes", nodeIDs, `Status == "ready" and "kernel.name" in Attributes`, []string{a.Client().NodeID()}, ""},
		{"node secret is not shown", nodeIDs, `SecretID is not empty`, []string{}, ""},
		{"node unknown selector", nodeIDs, `Drain == false`, nil, `"Drain"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.list(&api.QueryOptions{Filter: tc.filter})
			if tc.errMsg != "" {
				must.ErrorContains(t, err, "400")
				must.ErrorContains(t, err, structs.FilterErrorPrefix)
				must.ErrorContains(t, err, tc.errMsg)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}

	// Filtering comes before paging: a page holds per_page matches.
	stubs, qm, err := c.Jobs().List(&api.QueryOptions{Filter: `Type == "batch" and ID != "run"`, PerPage: 1})
	must.NoError(t, err)
	must.Len(t, 1, stubs)
	must.Eq(t, "xa", stubs[0].ID)
	must.Eq(t, "xb", qm.NextToken)
}

// TestFilter_QueueJobs checks that /v1/queue/jobs honours filter on the
// entries as listed.
func TestFilter_QueueJobs(t *testing.T) {
	_, c := queueAgent(t, "fifo", time.Minute)
	for _, id := range []string{"qa", "qb"} {
		qRegister(t, c, unplaceableJob(id, "batch", nil))
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return len(queueJobs(t, c)) == 2
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))

	var out []structs.BatchQueueListEntry
	_, err := c.Raw().Query("/v1/queue/jobs?filter="+url.QueryEscape(`JobID == "qb"`), &out, nil)
	must.NoError(t, err)
	must.Len(t, 1, out)
	must.Eq(t, "qb", out[0].JobID)

	_, err = c.Raw().Query("/v1/queue/jobs?filter="+url.QueryEscape(`Nope == "x"`), &out, nil)
	must.ErrorContains(t, err, "400")
	must.ErrorContains(t, err, `"Nope"`)
}
