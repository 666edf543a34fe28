package nomad

import (
	"context"
	"time"

	"github.com/nomadq/nomadq/nomad/batchqueue"
	"github.com/nomadq/nomadq/structs"
)

// newBatchQueue builds the server's batch queue; it runs only while the
// server leads (runBatchQueue is a leader loop).
func (s *Server) newBatchQueue() *batchqueue.Queue {
	return batchqueue.New(batchqueue.Config{
		State:   s.State,
		Commit:  batchQueueCommitter{s},
		Logger:  s.logger.Named("batch_queue"),
		Metrics: s.metrics(),
	})
}

// runBatchQueue rebuilds the queue from state and drives it until
// leadership ends.
func (s *Server) runBatchQueue(ctx context.Context) { s.batchQueue.Run(ctx) }

// BatchQueueDepth returns the queue depth by status, for scrape-time
// collectors; a follower reports zeros.
func (s *Server) BatchQueueDepth() map[string]int { return s.batchQueue.Status().Depth }

// BatchQueueReservationAge is how long the queue's reservation has been
// held (0: none), for scrape-time gauges; a follower reports 0.
func (s *Server) BatchQueueReservationAge() time.Duration {
	return s.batchQueue.ReservationAge(time.Now())
}

// BatchQueueShares returns each namespace's weighted share of the
// cluster, for scrape-time gauges; a follower reports none.
func (s *Server) BatchQueueShares() map[string]float64 { return s.batchQueue.Shares() }

// BatchQueueQueuedByNamespace counts queued entries per namespace, for
// scrape-time gauges; a follower reports none.
func (s *Server) BatchQueueQueuedByNamespace() map[string]int {
	return s.batchQueue.QueuedByNamespace()
}

// batchQueueCommitter writes the queue's decisions through Raft.
type batchQueueCommitter struct{ s *Server }

func (c batchQueueCommitter) Commit(req *structs.BatchQueueReleaseRequest) error {
	_, _, err := c.s.raftApply(structs.BatchQueueReleaseRequestType, req)
	return err
}
