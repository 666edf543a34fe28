package nomad

import (
	"context"
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/nomad/batchqueue"
	"github.com/nomadq/nomadq/state"
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

// batchQueueCommitter writes the queue's decisions through Raft.
type batchQueueCommitter struct{ s *Server }

func (c batchQueueCommitter) Commit(req *structs.BatchQueueReleaseRequest) error {
	_, _, err := c.s.raftApply(structs.BatchQueueReleaseRequestType, req)
	return err
}

// applyBatchQueueRelease removes placed entries, records releases and
// hands the released evals to the broker (a no-op on followers). A
// repeated release is not applied twice.
func (f *nomadFSM) applyBatchQueueRelease(buf []byte, index uint64) any {
	req, err := decode[structs.BatchQueueReleaseRequest](buf, structs.BatchQueueReleaseRequestType)
	if err != nil {
		return err
	}
	evals, err := f.State().BatchQueueApply(index, req)
	if err != nil {
		return err
	}
	for _, e := range evals {
		f.broker.Enqueue(e)
	}
	return nil
}

// heldByBatchQueue reports whether a pending eval waits in the batch
// queue rather than going to the broker. The state write that stored the
// eval decided it (routing happens once per eval ID); this is one memdb
// read, so the FSM never blocks on the queue.
func (f *nomadFSM) heldByBatchQueue(e *structs.Evaluation) bool {
	return e.Type == structs.JobTypeBatch && f.State().BatchQueueHoldsEval(e)
}

// drainBatchQueueIfOff releases every queued eval to the broker at once
// when the scheduler configuration at index has the queue switched off.
func (f *nomadFSM) drainBatchQueueIfOff(index uint64) error {
	st := f.State()
	_, cfg, err := st.SchedulerConfig()
	if err != nil || cfg == nil || cfg.BatchQueue.Enabled {
		return err
	}
	evals, err := st.BatchQueueDrain(index)
	if err != nil {
		return fmt.Errorf("drain batch queue: %w", err)
	}
	for _, e := range evals {
		f.broker.Enqueue(e)
	}
	return nil
}

// Queue is the RPC endpoint of the batch queue listing. The listing is
// leader state, so reads are always forwarded to the leader.
type Queue struct {
	srv *Server
}

// resetStaleIndex answers at once a blocking query whose index is ahead
// of this leader's queue index. The index is leader-local, so it starts
// again after a leadership change; a client holding the old leader's
// index would otherwise wait out its whole wait time and miss every
// change meanwhile.
func (q *Queue) resetStaleIndex(opts *structs.QueryOptions) {
	if index, _ := q.srv.batchQueue.Index(); opts.MinQueryIndex > index+1 {
		opts.MinQueryIndex = 0
	}
}

// List returns the queue entries: queued ones in release order with their
// position, then the released ones.
func (q *Queue) List(args *structs.BatchQueueListRequest, reply *structs.BatchQueueListResponse) error {
	args.AllowStale = false
	if done, err := q.srv.forward("Queue.List", args.QueryOptions, args, reply); done {
		return err
	}
	q.resetStaleIndex(&args.QueryOptions)
	return q.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, _ *state.StateStore) (uint64, error) {
		index, ch := q.srv.batchQueue.Index()
		ws.Add(ch)
		if args.JobID != "" {
			reply.Entries = []*structs.BatchQueueListEntry{}
			ns := args.Namespace
			if ns == "" {
				ns = structs.DefaultNamespace
			}
			if e := q.srv.batchQueue.Lookup(ns, args.JobID); e != nil {
				reply.Entries = append(reply.Entries, e)
			}
		} else {
			reply.Entries, reply.Tokens = q.srv.batchQueue.ListWithTokens()
		}
		return index + 1, nil
	})
}

// Status returns the queue settings, depth by status and placing
// workloads.
func (q *Queue) Status(args *structs.BatchQueueListRequest, reply *structs.BatchQueueStatusResponse) error {
	args.AllowStale = false
	if done, err := q.srv.forward("Queue.Status", args.QueryOptions, args, reply); done {
		return err
	}
	q.resetStaleIndex(&args.QueryOptions)
	return q.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, _ *state.StateStore) (uint64, error) {
		index, ch := q.srv.batchQueue.Index()
		ws.Add(ch)
		reply.Status = q.srv.batchQueue.Status()
		return index + 1, nil
	})
}
