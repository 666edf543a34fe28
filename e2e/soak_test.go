package e2e

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// soakRate is the soak's request rate, per second.
const soakRate = 200

// soakSlots is how many job IDs the soak's registers and stops cycle
// through, so state stays bounded and growth means a leak.
const soakSlots = 64

// soakSample is one reading of the agent's footprint.
type soakSample struct {
	at         time.Duration
	rssKiB     int
	goroutines int
	requests   int64
	refused    int64
	// jobs and evals are how many the agent's state holds.
	jobs, evals int
}

// The soak: one agent that is server and client takes mixed traffic at
// 200 requests/s for NOMADQ_SOAK (default 30m; 2m for a smoke run):
// registers and stops (purged) of 64 batch jobs, dispatches of a
// parameterized job, forced launches of a periodic job, and one request
// in eight of bad input. Every answer is a success, except the bad input,
// which is refused with a 4xx. An operator's forced GC (PUT
// /v1/system/gc) every 10 s keeps the state the traffic leaves (child
// jobs, evals) bounded, so growth beyond the bound is a leak. RSS (from
// /proc) and goroutines (from /v1/agent/self) are sampled twelve times;
// from the sample at a quarter of the run to the last, goroutines may
// grow by at most half plus 100 and RSS by at most half plus 128 MiB.
func TestSoak_MixedTraffic(t *testing.T) {
	longTests(t)
	length := 30 * time.Minute
	if v := os.Getenv("NOMADQ_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		must.NoError(t, err, must.Sprint("NOMADQ_SOAK"))
		length = d
	}
	ports := freePorts(t, 3)
	agent := startAgent(t, agentSpec{
		name: "soak", server: true, client: true, expect: 1, dataDir: t.TempDir(),
		http: ports[0], rpc: ports[1], serf: ports[2],
	})
	c := agent.api(t)
	waitFor(t, 60*time.Second, func() error {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil || len(nodes) != 1 || nodes[0].Status != "ready" {
			return fmt.Errorf("no ready node yet: %v", err)
		}
		return nil
	})

	// Most jobs place nothing (count 0), so the traffic measures the
	// servers' paths; one register in 16 runs a process on the client.
	soakJob := func(id string, count int) *api.Job {
		job := batchJob(id, "true")
		job.TaskGroups[0].Count = &count
		return job
	}
	dispatch := soakJob("soak-dispatch", 0)
	dispatch.ParameterizedJob = &api.ParameterizedJobConfig{}
	_, _, err := c.Jobs().Register(dispatch, nil)
	must.NoError(t, err)
	periodic := soakJob("soak-periodic", 0)
	periodic.Periodic = &api.PeriodicConfig{Spec: new("0 0 1 1 *"), ProhibitOverlap: new(false)}
	_, _, err = c.Jobs().Register(periodic, nil)
	must.NoError(t, err)

	var (
		mu         sync.Mutex
		registered [soakSlots]bool
		busy       [soakSlots]bool
		errs       []string
		requests   atomic.Int64
		refused    atomic.Int64
		failed     atomic.Int64
		behind     atomic.Int64
	)
	fail := func(op string, err error) {
		failed.Add(1)
		mu.Lock()
		if len(errs) < 10 {
			errs = append(errs, fmt.Sprintf("%s: %v", op, err))
		}
		mu.Unlock()
	}
	op := func(i int) {
		defer requests.Add(1)
		switch i % 8 {
		case 0, 1, 2, 3:
			slot := (i/8*4 + i%8) % soakSlots
			mu.Lock()
			if busy[slot] {
				mu.Unlock()
				if _, _, err := c.Jobs().Dispatch("soak-dispatch", nil, nil, "", nil); err != nil {
					fail("dispatch", err)
				}
				return
			}
			busy[slot] = true
			stop := registered[slot] && i%3 == 0
			registered[slot] = !stop
			mu.Unlock()
			id := fmt.Sprintf("soak-%02d", slot)
			if stop {
				if _, _, err := c.Jobs().Deregister(id, true, nil); err != nil {
					fail("stop "+id, err)
				}
			} else {
				count := 0
				if i%16 == 0 {
					count = 1
				}
				if _, _, err := c.Jobs().Register(soakJob(id, count), nil); err != nil {
					fail("register "+id, err)
				}
			}
			mu.Lock()
			busy[slot] = false
			mu.Unlock()
		case 4, 5:
			if _, _, err := c.Jobs().Dispatch("soak-dispatch", nil, nil, "", nil); err != nil {
				fail("dispatch", err)
			}
		case 6:
			if _, _, err := c.Jobs().PeriodicForce("soak-periodic", nil); err != nil {
				fail("periodic force", err)
			}
		case 7:
			bad := soakJob("soak-bad", 0)
			bad.Type = new("nonsense")
			_, _, err := c.Jobs().Register(bad, nil)
			var coded api.UnexpectedResponseError
			switch {
			case err == nil:
				fail("bad input", fmt.Errorf("a job of type %q was accepted", "nonsense"))
			case errors.As(err, &coded) && coded.StatusCode() >= 400 && coded.StatusCode() < 500:
				refused.Add(1)
			default:
				fail("bad input", err)
			}
		}
	}

	work := make(chan int, soakRate)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := range work {
				op(i)
			}
		})
	}
	sample := func(at time.Duration) soakSample {
		s := soakSample{at: at, requests: requests.Load(), refused: refused.Load()}
		if buf, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", agent.cmd.Process.Pid)); err == nil {
			for line := range strings.SplitSeq(string(buf), "\n") {
				if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
					s.rssKiB, _ = strconv.Atoi(f[1])
				}
			}
		}
		if jobs, _, err := c.Jobs().List(nil); err == nil {
			s.jobs = len(jobs)
		}
		if evals, _, err := c.Evaluations().List(nil); err == nil {
			s.evals = len(evals)
		}
		var self struct{ Stats map[string]map[string]string }
		if _, err := c.Raw().Query("/v1/agent/self", &self, nil); err == nil {
			s.goroutines, _ = strconv.Atoi(self.Stats["runtime"]["goroutines"])
		}
		return s
	}

	start := time.Now()
	samples := []soakSample{sample(0)}
	every := length / 12
	nextSample := start.Add(every)
	gcDone := make(chan struct{})
	wg.Go(func() {
		gc := time.NewTicker(10 * time.Second)
		defer gc.Stop()
		for {
			select {
			case <-gcDone:
				return
			case <-gc.C:
				if err := c.System().GarbageCollect(); err != nil {
					fail("system gc", err)
				}
			}
		}
	})
	tick := time.NewTicker(time.Second / soakRate)
	// Each tick sends what the rate owes since the start, so ticks the
	// ticker drops on a busy machine do not lower the rate.
	for i := 0; time.Since(start) < length; {
		<-tick.C
		for owed := int(time.Since(start) * soakRate / time.Second); i < owed; i++ {
			select {
			case work <- i:
			default:
				behind.Add(1)
			}
		}
		if time.Now().After(nextSample) {
			samples = append(samples, sample(time.Since(start).Round(time.Second)))
			nextSample = nextSample.Add(every)
		}
	}
	tick.Stop()
	close(work)
	close(gcDone)
	wg.Wait()
	samples = append(samples, sample(time.Since(start).Round(time.Second)))

	var table strings.Builder
	fmt.Fprintf(&table, "%8s  %8s  %10s  %9s  %8s  %7s  %7s\n", "at", "RSS MiB", "goroutines", "requests", "refused", "jobs", "evals")
	for _, s := range samples {
		fmt.Fprintf(&table, "%8s  %8.1f  %10d  %9d  %8d  %7d  %7d\n",
			s.at, float64(s.rssKiB)/1024, s.goroutines, s.requests, s.refused, s.jobs, s.evals)
	}
	elapsed := time.Since(start)
	t.Logf("soak of %s: %d requests (%.0f/s), %d refused bad input, %d failed, %d not sent (workers busy)\n%s",
		length, requests.Load(), float64(requests.Load())/elapsed.Seconds(), refused.Load(), failed.Load(), behind.Load(), table.String())

	must.Eq(t, 0, failed.Load(), must.Sprintf("error answers: %v", errs))
	must.LessEq(t, requests.Load()/100, behind.Load(), must.Sprint("more than 1% of the requests could not be sent at the rate"))
	warm, last := samples[len(samples)/4], samples[len(samples)-1]
	must.Positive(t, warm.rssKiB)
	must.Positive(t, warm.goroutines)
	must.LessEq(t, warm.goroutines*3/2+100, last.goroutines, must.Sprint("goroutines grew"))
	must.LessEq(t, warm.rssKiB*3/2+128*1024, last.rssKiB, must.Sprint("RSS grew"))
}
