package agent

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

// multifactorAgent is an agent whose queue releases one workload at a
// time in the multifactor order with the weights m.
func multifactorAgent(t *testing.T, m structs.BatchQueueMultifactor) (*Agent, *api.Client) {
	a := NewTestAgent(t, func(c *config.Config) {
		c.Server.DefaultSchedulerConfig.BatchQueue = structs.BatchQueueConfig{
			Enabled: true, Order: structs.BatchQueueOrderMultifactor, ConcurrentPlacements: 1,
			WorkloadTimeout: time.Minute, Backfill: true, Multifactor: m,
		}
	})
	return a, apiClient(t, a)
}

func queueUsage(t *testing.T, c *api.Client) map[string]structs.BatchQueueNamespaceUsage {
	t.Helper()
	var rows []structs.BatchQueueNamespaceUsage
	_, err := c.Raw().Query("/v1/queue/usage", &rows, nil)
	must.NoError(t, err)
	out := map[string]structs.BatchQueueNamespaceUsage{}
	for _, r := range rows {
		out[r.Namespace] = r
	}
	return out
}

// placedOrder is the jobs of the namespaces placed after index since,
// in the order of their allocs' creation.
func placedOrder(t *testing.T, c *api.Client, since uint64, namespaces ...string) []string {
	type placed struct {
		id    string
		index uint64
	}
	var got []placed
	for _, ns := range namespaces {
		allocs, _, err := c.Allocations().List(&api.QueryOptions{Namespace: ns})
		must.NoError(t, err)
		for _, al := range allocs {
			if al.CreateIndex > since {
				got = append(got, placed{al.JobID, al.CreateIndex})
			}
		}
	}
	slices.SortFunc(got, func(x, y placed) int { return int(x.index) - int(y.index) })
	out := make([]string, len(got))
	for i, p := range got {
		out[i] = p.id
	}
	return out
}

// Namespace qa ran 8 jobs to completion; qb ran none. While a gate holds
// the slot, qa submits 10 and qb 4: with only FairShareWeight set, qb's
// 4 are placed before qa's second, the listing explains the wait with
// factors that add up, /v1/queue/usage shows qa's usage above qb's, and
// a reset through Raft forgets qa's past.
func TestBatchQueue_MultifactorDecayedUsage(t *testing.T) {
	a, c := multifactorAgent(t, structs.BatchQueueMultifactor{FairShareWeight: 1000, UsageHalfLife: time.Hour})
	for _, ns := range []string{"qa", "qb"} {
		_, err := c.Namespaces().Register(&api.Namespace{Name: ns}, nil)
		must.NoError(t, err)
	}
	twentieth := nodeMemory(t, c) / 20
	for i := range 8 {
		qRegister(t, c, inNamespace(rawJob(fmt.Sprintf("past-%d", i), 50, "1", twentieth), "qa"))
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		allocs, _, err := c.Allocations().List(&api.QueryOptions{Namespace: "qa"})
		if err != nil || len(allocs) < 8 {
			return false
		}
		for _, al := range allocs {
			if al.ClientStatus != api.AllocClientStatusComplete {
				return false
			}
		}
		return true
	}), wait.Timeout(60*time.Second), wait.Gap(100*time.Millisecond)))

	gate(t, c)
	for i := range 10 {
		qRegister(t, c, inNamespace(rawJob(fmt.Sprintf("a-%d", i), 50, "60", 16), "qa"))
	}
	for i := range 4 {
		qRegister(t, c, inNamespace(rawJob(fmt.Sprintf("b-%d", i), 50, "60", 16), "qb"))
	}
	// The listing explains the line: qb's entries first, each entry's
	// factors adding up to its effective priority.
	var queued []structs.BatchQueueListEntry
	for _, e := range queueJobs(t, c) {
		if e.Status == structs.BatchQueueStatusQueued {
			queued = append(queued, e)
		}
	}
	must.Len(t, 14, queued)
	for i, e := range queued {
		must.NotNil(t, e.Factors)
		must.True(t, math.Abs(e.Factors.Sum()-e.EffectivePriority) < 1e-6, must.Sprintf("%s: %+v", e.JobID, e))
		must.Eq(t, e.Namespace == "qb", i < 4, must.Sprintf("place %d: %s", i+1, e.JobID))
	}
	must.Greater(t, queued[13].Factors.FairShare, queued[0].Factors.FairShare)

	_, wm, err := c.Jobs().Deregister("hog", false, nil)
	must.NoError(t, err)
	since := wm.LastIndex
	var order []string
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		order = placedOrder(t, c, since, "qa", "qb")
		bs := 0
		for _, id := range order {
			if id[0] == 'b' {
				bs++
			}
		}
		return bs == 4
	}), wait.Timeout(60*time.Second), wait.Gap(100*time.Millisecond)))
	// qa's jobs placed before qb's last one.
	as, bs := 0, 0
	for _, id := range order {
		if bs == 4 {
			break
		}
		if id[0] == 'a' {
			as++
		} else {
			bs++
		}
	}
	must.LessEq(t, 1, as, must.Sprintf("placement order after the gate: %v", order))

	// Once qb's jobs run, they count too; qa's past still weighs more.
	var usage map[string]structs.BatchQueueNamespaceUsage
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		usage = queueUsage(t, c)
		return usage["qb"].Usage > 0
	}), wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))
	must.Greater(t, usage["qb"].Usage, usage["qa"].Usage)
	must.Less(t, usage["qb"].FairShare, usage["qa"].FairShare)
	must.Eq(t, 1, usage["qa"].Weight)

	// A reset goes through Raft and forgets qa's past runs; it names its
	// namespace, which must exist.
	before := usage["qa"].Usage
	code, body := aclCall(t, a, http.MethodPut, "/v1/queue/usage/reset?namespace=qa", "", "")
	must.Eq(t, http.StatusOK, code, must.Sprint(body))
	after := queueUsage(t, c)["qa"]
	must.Positive(t, after.ResetTime)
	must.Less(t, before/10, after.Usage)
	code, body = aclCall(t, a, http.MethodPut, "/v1/queue/usage/reset", "", "")
	must.Eq(t, http.StatusBadRequest, code)
	must.StrContains(t, body, "namespace is required")
	code, body = aclCall(t, a, http.MethodPut, "/v1/queue/usage/reset?namespace=nope", "", "")
	must.Eq(t, http.StatusNotFound, code)
	must.StrContains(t, body, `namespace "nope" not found`)
}

// With PriorityWeight 1000, AgeWeight 2000 and MaxAge 4 s, a priority-10
// job that waited past MaxAge is placed before priority-90 jobs
// submitted 4.5 s after it.
func TestBatchQueue_MultifactorAge(t *testing.T) {
	_, c := multifactorAgent(t, structs.BatchQueueMultifactor{PriorityWeight: 1000, AgeWeight: 2000, MaxAge: 4 * time.Second})
	gate(t, c)
	qRegister(t, c, rawJob("old-10", 10, "60", 16))
	time.Sleep(4500 * time.Millisecond) // the age under test is wall-clock time in the queue
	qRegister(t, c, rawJob("new-90a", 90, "60", 16))
	qRegister(t, c, rawJob("new-90b", 90, "60", 16))
	old := queueEntry(t, c, "old-10")
	must.NotNil(t, old)
	must.Eq(t, 2000, old.Factors.Age)
	must.Eq(t, 100, old.Factors.Priority)
	must.Eq(t, 1, old.Position)
	_, wm, err := c.Jobs().Deregister("hog", false, nil)
	must.NoError(t, err)
	var order []string
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		order = placedOrder(t, c, wm.LastIndex, "default")
		order = slices.DeleteFunc(order, func(id string) bool { return id == "gate" })
		return len(order) == 3
	}), wait.Timeout(60*time.Second), wait.Gap(100*time.Millisecond)))
	must.Eq(t, "old-10", order[0], must.Sprintf("placement order: %v", order))
}
