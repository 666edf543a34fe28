package nomad

import (
	metrics "github.com/hashicorp/go-metrics"

	"github.com/nomadq/nomadq/nomad/blockedevals"
	"github.com/nomadq/nomadq/nomad/evalbroker"
	"github.com/nomadq/nomadq/nomad/planqueue"
)

// discardMetrics is the handle of a server started without one: its
// timings go nowhere, so tests need no process-global sink.
var discardMetrics = func() *metrics.Metrics {
	m, _ := metrics.New(metrics.DefaultConfig("nomad"), &metrics.BlackholeSink{})
	return m
}()

// metrics is where the server's timings go: Config.Metrics, which the
// agent points at its own sinks, or nowhere.
func (s *Server) metrics() *metrics.Metrics {
	if s.config.Metrics != nil {
		return s.config.Metrics
	}
	return discardMetrics
}

// EvalBrokerStats reports the eval broker's queues. A follower's broker is
// disabled and reports zeros.
func (s *Server) EvalBrokerStats() evalbroker.Stats { return s.evalBroker.Stats() }

// BlockedEvalsStats reports the evals waiting for capacity.
func (s *Server) BlockedEvalsStats() blockedevals.Stats { return s.blockedEvals.Stats() }

// PlanQueueStats reports the plans waiting for the applier.
func (s *Server) PlanQueueStats() planqueue.Stats { return s.planQueue.Stats() }

// HeartbeatsActive is the number of nodes whose heartbeat this server
// tracks; only the leader tracks any.
func (s *Server) HeartbeatsActive() int { return s.heartbeats.Count() }
