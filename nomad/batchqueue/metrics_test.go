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
		h.register(batchJob("a", 50, 1))
		h.register(batchJob("b", 50, 1))
		h.register(batchJob("c", 50, 1))
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
		must.Eq(t, 3, got["nomad.batch_queue.enqueued"])
		must.Eq(t, 3, got["nomad.batch_queue.released"])
		must.Eq(t, 1, got["nomad.batch_queue.placed"])
		must.Eq(t, 1, got["nomad.batch_queue.constrained"])
		must.Eq(t, 1, got["nomad.batch_queue.stalled"])
		must.Eq(t, 0, got["nomad.batch_queue.removed"])
		// The depth gauge is read from Status at scrape time.
		depth := h.q.Status().Depth
		must.Eq(t, 1, depth[structs.BatchQueueStatusStalled])
		must.Eq(t, 1, depth[structs.BatchQueueStatusConstrained])
		must.Eq(t, 0, depth[structs.BatchQueueStatusQueued])

		// A queued job stopped counts as removed.
		h.register(batchJob("d", 50, 1))
		h.register(batchJob("e", 50, 1))
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
		must.Eq(t, 5, got["nomad.batch_queue.enqueued"])
		must.Eq(t, 1, got["nomad.batch_queue.removed"])
	})
}
