package agent

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

// fairAgent is an agent whose queue releases one workload at a time in
// the fair order, with backfill.
func fairAgent(t *testing.T) (*Agent, *api.Client) {
	a := NewTestAgent(t, func(c *config.Config) {
		c.Server.DefaultSchedulerConfig.BatchQueue = structs.BatchQueueConfig{
			Enabled: true, Order: structs.BatchQueueOrderFair, ConcurrentPlacements: 1,
			WorkloadTimeout: time.Minute, Backfill: true,
		}
	})
	return a, apiClient(t, a)
}

func inNamespace(job *api.Job, ns string) *api.Job {
	job.Namespace = new(ns)
	return job
}

// Namespace a floods the queue, then b submits: with weights 1:1, b's
// jobs are all placed within the first 10 placements after b submitted,
// although 50 of a's were queued before them. A gate holds the queue's
// one slot while both submit, so the machine's speed cannot decide how
// many of a's jobs go before b has submitted at all.
func TestBatchQueue_FairShareInterleavesAFlood(t *testing.T) {
	a, c := fairAgent(t)
	for _, ns := range []string{"a", "b"} {
		_, err := c.Namespaces().Register(&api.Namespace{Name: ns}, nil)
		must.NoError(t, err)
	}
	gate(t, c)
	for i := range 50 {
		qRegister(t, c, inNamespace(rawJob(fmt.Sprintf("a-%02d", i), 50, "60", 16), "a"))
	}
	// The flood shows in the per-namespace depth while it waits.
	must.Eq(t, 50, scrapeInt(t, a, `nomad_nomad_batch_queue_queued{namespace="a"}`))
	for i := range 5 {
		qRegister(t, c, inNamespace(rawJob(fmt.Sprintf("b-%d", i), 50, "60", 16), "b"))
	}
	_, wm, err := c.Jobs().Deregister("hog", false, nil) // opens the gate
	must.NoError(t, err)
	since := wm.LastIndex

	type placed struct {
		ns    string
		index uint64
	}
	var after []placed
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		after = after[:0]
		bs := 0
		for _, ns := range []string{"a", "b"} {
			allocs, _, err := c.Allocations().List(&api.QueryOptions{Namespace: ns})
			if err != nil {
				return false
			}
			for _, al := range allocs {
				if al.CreateIndex > since {
					after = append(after, placed{ns, al.CreateIndex})
				}
				if ns == "b" {
					bs++
				}
			}
		}
		return bs == 5
	}), wait.Timeout(60*time.Second), wait.Gap(100*time.Millisecond)))
	slices.SortFunc(after, func(x, y placed) int { return int(x.index) - int(y.index) })
	var firstTen []string
	for _, p := range after[:min(10, len(after))] {
		firstTen = append(firstTen, p.ns)
	}
	bs := 0
	for _, ns := range firstTen {
		if ns == "b" {
			bs++
		}
	}
	must.Eq(t, 5, bs, must.Sprintf("namespaces of the first 10 placements after b submitted: %v", firstTen))
}

// timedJob is rawJob with a max_run_duration.
func timedJob(id string, secs string, memMB int, limit time.Duration) *api.Job {
	job := rawJob(id, 50, secs, memMB)
	job.TaskGroups[0].MaxRunDuration = &limit
	return job
}

// A big job at the head of a full node waits for capacity with a
// reservation: a small job whose max_run_duration ends before the
// reserved start runs while it waits, a small job without one waits
// behind it, and the big job starts near its estimate (a generous 10 s
// ceiling: the fillers' kill and the client's report lag on a loaded
// machine; the order assertions are the ones that matter).
func TestBatchQueue_BackfillBehindAReservation(t *testing.T) {
	_, c := fairAgent(t)
	m := nodeMemory(t, c)
	fifth := m / 5 // four of these fit, with room to spare

	// Two fillers hold 40% of the node until their deadline.
	qRegister(t, c, timedJob("filler-1", "60", fifth, 5*time.Second))
	qRegister(t, c, timedJob("filler-2", "60", fifth, 5*time.Second))
	allocOf(t, c, "filler-1", 10*time.Second)
	allocOf(t, c, "filler-2", 10*time.Second)

	// The big job needs 85%: the scheduler finds no room and the queue
	// reserves it from the fillers' deadlines.
	qRegister(t, c, rawJob("big", 50, "1", m*85/100))
	var estimate int64
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		// Released, and reserved: not a queued entry's estimate.
		e := queueEntry(t, c, "big")
		if e == nil || e.Status == structs.BatchQueueStatusQueued || e.Reason != "Resources" {
			return false
		}
		estimate = e.EstimatedStart
		return true
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
	must.Positive(t, estimate)

	// A small timed job that ends before the reserved start runs now; an
	// untimed one waits behind the big job.
	qRegister(t, c, timedJob("short", "60", fifth, time.Second))
	qRegister(t, c, rawJob("untimed", 50, "60", fifth))
	short := allocOf(t, c, "short", 5*time.Second)
	bigAllocs, _, err := c.Jobs().Allocations("big", true, nil)
	must.NoError(t, err)
	must.SliceEmpty(t, bigAllocs, must.Sprint("the short job ran before the big one"))
	must.Eq(t, "Resources", queueEntry(t, c, "untimed").Reason)

	big := allocOf(t, c, "big", 15*time.Second)
	must.Less(t, big.CreateIndex, short.CreateIndex+1)
	full, _, err := c.Allocations().Info(big.ID, nil)
	must.NoError(t, err)
	must.LessEq(t, estimate+int64(10*time.Second), full.CreateTime,
		must.Sprintf("big started %s after its estimate", time.Duration(full.CreateTime-estimate)))
	untimed := allocOf(t, c, "untimed", 15*time.Second)
	must.Greater(t, big.CreateIndex, untimed.CreateIndex)
}

// scrapeInt reads one series of the Prometheus scrape as an integer, 0
// when absent.
func scrapeInt(t *testing.T, a *Agent, series string) int {
	n, _ := strconv.Atoi(scrape(t, a)[series])
	return n
}
