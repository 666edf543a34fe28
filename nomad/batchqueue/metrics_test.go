package batchqueue

import (
	"testing"
	"testing/synctest"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestQueue_Metrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := metrics.NewInmemSink(time.Hour, time.Hour)
		conf := metrics.DefaultConfig("nomad")
		conf.EnableHostname, conf.EnableRuntimeMetrics, conf.EnableServiceLabel = false, false, false
		conf.ServiceName = ""
		m, err := metrics.New(conf, sink)
		must.NoError(t, err)

		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Minute), m)
		defer h.stop()
		h.registerAll("a", "b", "c")
		must.Eq(t, []string{"a"}, h.releasedJobs())
		h.place("a", 0, 1)
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
		h.infeasible("b")
		must.Eq(t, []string{"a", "b", "c"}, h.releasedJobs())
		time.Sleep(2 * time.Minute)
		synctest.Wait()

		got := map[string]float64{}
		for _, iv := range sink.Data() {
			for _, c := range iv.Counters {
				got[c.Name] += c.Sum
			}
		}
		must.Eq(t, 3, got["nomad.batch_queue.enqueued_total"])
		must.Eq(t, 3, got["nomad.batch_queue.released_total"])
		must.Eq(t, 1, got["nomad.batch_queue.placed_total"])
		must.Eq(t, 1, got["nomad.batch_queue.constrained_total"])
		must.Eq(t, 1, got["nomad.batch_queue.stalled_total"])
		must.Eq(t, 0, got["nomad.batch_queue.removed_total"])
		// The depth gauge is read from Status at scrape time.
		depth := h.q.Status().Depth
		must.Eq(t, 1, depth[structs.BatchQueueStatusStalled])
		must.Eq(t, 1, depth[structs.BatchQueueStatusConstrained])
		must.Eq(t, 0, depth[structs.BatchQueueStatusQueued])

		// A queued job stopped counts as removed.
		h.registerAll("d", "e")
		synctest.Wait()
		must.Eq(t, 1, h.q.Status().Depth[structs.BatchQueueStatusQueued]) // d placing, e queued
		h.stopJob("e")
		synctest.Wait()
		must.Eq(t, 0, h.q.Status().Depth[structs.BatchQueueStatusQueued])
		got = map[string]float64{}
		for _, iv := range sink.Data() {
			for _, c := range iv.Counters {
				got[c.Name] += c.Sum
			}
		}
		must.Eq(t, 5, got["nomad.batch_queue.enqueued_total"])
		must.Eq(t, 1, got["nomad.batch_queue.removed_total"])

		// Switching the queue off drains it: b (constrained), c
		// (stalled), d (placing) and f (queued) count as removed.
		h.register(batchJob("f", 50, 1))
		synctest.Wait()
		off := cfg(structs.BatchQueueOrderFIFO, 1, time.Minute)
		off.Enabled = false
		h.setConfig(off) // drains the table in the same write
		synctest.Wait()
		got = map[string]float64{}
		samples := map[string]int{}
		for _, iv := range sink.Data() {
			for _, c := range iv.Counters {
				got[c.Name] += c.Sum
			}
			for _, sm := range iv.Samples {
				samples[sm.Name] += sm.Count
			}
		}
		must.Eq(t, 5, got["nomad.batch_queue.removed_total"])
		must.Eq(t, 4, samples["nomad.batch_queue.wait_time_seconds"]) // a, b, c, d released
		must.Eq(t, 1, samples["nomad.batch_queue.placement_time_seconds"])
	})
}
