package agent

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

// waitReason waits until the job's entry in GET /v1/queue/jobs carries
// the reason code and returns the entry.
func waitReason(t *testing.T, c *api.Client, id, code string, within time.Duration) *structs.BatchQueueListEntry {
	t.Helper()
	var e *structs.BatchQueueListEntry
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		e = queueEntry(t, c, id)
		return e != nil && e.Reason == code
	}), wait.Timeout(within), wait.Gap(50*time.Millisecond)), must.Func(func() string {
		if e == nil {
			return id + " is not in the queue"
		}
		return id + " has reason " + e.Reason + ": " + e.ReasonDetail
	}))
	return e
}

// Every waiting or stuck state of the queue shows in GET /v1/queue/jobs
// as a bare Reason code a client can switch on, with the words in
// ReasonDetail: constrained, namespace limit, priority, fair share and
// held in the fair order; resources behind a reservation with backfill;
// stalled past the workload timeout.
func TestBatchQueue_ReasonCodes(t *testing.T) {
	t.Run("fair order", func(t *testing.T) {
		a := NewTestAgent(t, func(c *config.Config) {
			c.Server.DefaultSchedulerConfig.BatchQueue = structs.BatchQueueConfig{
				Enabled: true, Order: structs.BatchQueueOrderFair, ConcurrentPlacements: 2, WorkloadTimeout: time.Hour,
			}
		})
		c := apiClient(t, a)
		for _, ns := range []*api.Namespace{{Name: "a"}, {Name: "b"},
			{Name: "capped", Meta: map[string]string{structs.MetaBatchQueueMaxRunning: "1"}}} {
			_, err := c.Namespaces().Register(ns, nil)
			must.NoError(t, err)
		}

		nowhere := rawJob("nowhere", 50, "1", 16)
		nowhere.Constrain(api.NewConstraint("${attr.kernel.name}", "=", "plan9"))
		qRegister(t, c, nowhere)
		e := waitReason(t, c, "nowhere", "Constrained", 10*time.Second)
		must.Eq(t, structs.BatchQueueStatusConstrained, e.Status)
		must.StrHasPrefix(t, `group "g": `, e.ReasonDetail)

		qRegister(t, c, inNamespace(rawJob("capped-1", 50, "120", 16), "capped"))
		must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
			allocs, _, err := c.Jobs().Allocations("capped-1", true, &api.QueryOptions{Namespace: "capped"})
			return err == nil && len(allocs) > 0
		}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
		gate(t, c) // holds one of the two slots
		e = waitReason(t, c, "gate", "Placing", 5*time.Second)
		must.StrHasPrefix(t, "the scheduler is placing its allocations", e.ReasonDetail)

		// A slot is free, but capped runs its one alloc already.
		qRegister(t, c, inNamespace(rawJob("capped-2", 50, "1", 16), "capped"))
		e = waitReason(t, c, "capped-2", "NamespaceLimit", 10*time.Second)
		must.Eq(t, structs.BatchQueueStatusQueued, e.Status)
		must.Eq(t, "its namespace is at its batch_queue_max_running or batch_queue_max_placing cap", e.ReasonDetail)

		// A second gate takes the other slot; the line waits behind both.
		qRegister(t, c, rawJob("gate-2", 50, "1", nodeMemory(t, c)*6/10))
		waitReason(t, c, "gate-2", "Placing", 10*time.Second)
		for _, id := range []string{"a-1", "a-2"} {
			qRegister(t, c, inNamespace(rawJob(id, 50, "1", 16), "a"))
		}
		qRegister(t, c, inNamespace(rawJob("b-1", 50, "1", 16), "b"))
		req, err := http.NewRequest(http.MethodPut, a.HTTPAddr()+"/v1/queue/job/a-2/hold?namespace=a", nil)
		must.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(string(body)))

		e = waitReason(t, c, "a-2", "Held", 5*time.Second)
		must.Eq(t, `held by an operator; "nomad queue release" lets it go`, e.ReasonDetail)
		// The head of the line waits for a slot; the first entry of each
		// other namespace waits for its fair share; nothing else waits.
		seen := map[string]bool{}
		for _, e := range queueJobs(t, c) {
			if e.Status != structs.BatchQueueStatusQueued || e.JobID == "a-2" {
				continue
			}
			must.False(t, seen[e.Namespace], must.Sprintf("one waiting entry per namespace, got a second in %s", e.Namespace))
			seen[e.Namespace] = true
			if e.Position == 1 {
				must.Eq(t, "Priority", e.Reason, must.Sprint(e.JobID))
				must.Eq(t, "first in line, waiting for a free placement slot", e.ReasonDetail)
				continue
			}
			must.Eq(t, "FairShare", e.Reason, must.Sprint(e.JobID))
			must.Eq(t, "another namespace is further below its fair share and goes first", e.ReasonDetail)
		}
		must.MapLen(t, 3, seen)
	})

	t.Run("reservation", func(t *testing.T) {
		_, c := fairAgent(t)
		fifth := nodeMemory(t, c) / 5
		qRegister(t, c, timedJob("filler-1", "60", fifth, 30*time.Second))
		qRegister(t, c, timedJob("filler-2", "60", fifth, 30*time.Second))
		allocOf(t, c, "filler-1", 10*time.Second)
		allocOf(t, c, "filler-2", 10*time.Second)
		qRegister(t, c, rawJob("big", 50, "1", nodeMemory(t, c)*85/100))
		e := waitReason(t, c, "big", "Resources", 10*time.Second)
		must.Eq(t, structs.BatchQueueStatusPlacing, e.Status)
		must.Eq(t, "waiting for capacity: reserved from the max_run_duration deadlines of running allocations", e.ReasonDetail)

		qRegister(t, c, rawJob("untimed", 50, "60", fifth))
		e = waitReason(t, c, "untimed", "Resources", 10*time.Second)
		must.Eq(t, structs.BatchQueueStatusQueued, e.Status)
		must.Eq(t, `waiting for capacity that job "big", ahead of it, has reserved`, e.ReasonDetail)
	})

	t.Run("stalled", func(t *testing.T) {
		_, c := queueAgent(t, structs.BatchQueueOrderFIFO, 2*time.Second)
		mem := nodeMemory(t, c) * 6 / 10
		qRegister(t, c, rawJob("hog", 50, "60", mem))
		allocOf(t, c, "hog", 10*time.Second)
		qRegister(t, c, rawJob("big", 50, "1", mem))
		e := waitReason(t, c, "big", "Stalled", 15*time.Second)
		must.Eq(t, structs.BatchQueueStatusStalled, e.Status)
		must.Eq(t, "no new placement for 2s (workload_timeout)", e.ReasonDetail)
	})
}
