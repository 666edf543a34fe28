package nomad

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// QueueEndpoint is the RPC endpoint of the batch queue listing, served as
// "Queue" (Queue.List, Queue.Status). The listing is leader state, so
// reads are always forwarded to the leader.
type QueueEndpoint struct {
	srv *Server
}

// resetStaleIndex answers at once a blocking query whose index is ahead
// of this leader's queue index. The index is leader-local, so it starts
// again after a leadership change; a client holding the old leader's
// index would otherwise wait out its whole wait time and miss every
// change meanwhile.
func (q *QueueEndpoint) resetStaleIndex(opts *structs.QueryOptions) {
	if index, _ := q.srv.batchQueue.Index(); opts.MinQueryIndex > index+1 {
		opts.MinQueryIndex = 0
	}
}

// List returns the queue entries: queued ones in release order with their
// position, then the released ones.
func (q *QueueEndpoint) List(args *structs.BatchQueueListRequest, reply *structs.BatchQueueListResponse) error {
	return q.read("Queue.List", &args.QueryOptions, args, reply, &reply.QueryMeta, func(allow func(string) bool) {
		if args.JobID == "" {
			// The line is one for every namespace; a token sees the
			// entries of the namespaces it may read jobs in, each with
			// its place in the whole line. A named namespace narrows
			// the listing to it; "*" (or none, from within the server)
			// lists them all.
			entries, tokens := q.srv.batchQueue.ListWithTokens()
			reply.Entries, reply.Tokens = entries[:0:0], tokens[:0:0]
			only := args.Namespace
			if only == "*" {
				only = ""
			}
			for i, e := range entries {
				if allow(e.Namespace) && (only == "" || e.Namespace == only) {
					reply.Entries = append(reply.Entries, e)
					if i < len(tokens) {
						reply.Tokens = append(reply.Tokens, tokens[i])
					}
				}
			}
			return
		}
		reply.Entries = []*structs.BatchQueueListEntry{}
		ns := args.Namespace
		if ns == "" {
			ns = structs.DefaultNamespace
		}
		if e := q.srv.batchQueue.Lookup(ns, args.JobID); e != nil && allow(e.Namespace) {
			reply.Entries = append(reply.Entries, e)
		}
	})
}

// Status returns the queue settings, depth by status and placing
// workloads.
func (q *QueueEndpoint) Status(args *structs.BatchQueueListRequest, reply *structs.BatchQueueStatusResponse) error {
	return q.read("Queue.Status", &args.QueryOptions, args, reply, &reply.QueryMeta, func(allow func(string) bool) {
		reply.Status = q.srv.batchQueue.Status()
		// Depths are counts over the whole line; the placing workloads
		// name jobs, so only those the token may read are shown.
		reply.Status.Placing = slices.DeleteFunc(slices.Clone(reply.Status.Placing), func(e *structs.BatchQueueListEntry) bool {
			return !allow(e.Namespace)
		})
	})
}

// Control holds, releases or tops a queued job through Raft. The job
// must wait in the queue: a job that is placing, done or unknown is a
// 404, an unknown operation a 400, each naming what was asked.
func (q *QueueEndpoint) Control(args *structs.BatchQueueControlRequest, reply *structs.BatchQueueControlResponse) error {
	if done, err := q.srv.forward("Queue.Control", args.WriteRequest, args, reply); done {
		return err
	}
	if args.Namespace == "" {
		args.Namespace = structs.DefaultNamespace
	}
	switch args.Op {
	case structs.BatchQueueHold, structs.BatchQueueUnhold, structs.BatchQueueTop:
	default:
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "batch queue control %q is not allowed: must be %q, %q or %q",
			args.Op, structs.BatchQueueHold, structs.BatchQueueUnhold, structs.BatchQueueTop)
	}
	e, err := q.srv.State().BatchQueueEntryByJob(nil, args.Namespace, args.JobID)
	if err != nil {
		return err
	}
	if e == nil || e.Released() {
		return structs.NewErrRPCCodedf(http.StatusNotFound, "job %q in namespace %q is not waiting in the batch queue", args.JobID, args.Namespace)
	}
	if err := q.checkHeld(args, e); err != nil {
		return err
	}
	_, index, err := q.srv.raftApply(structs.BatchQueueControlRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// checkHeld refuses a release of a job that is not held and a hold of
// one that is: either would answer "done" and change nothing, and the
// operator would believe the job's state was what was asked.
func (q *QueueEndpoint) checkHeld(args *structs.BatchQueueControlRequest, e *structs.BatchQueueEntry) error {
	if args.Op != structs.BatchQueueHold && args.Op != structs.BatchQueueUnhold {
		return nil
	}
	controls, err := q.srv.State().BatchQueueControls(nil)
	if err != nil {
		return err
	}
	c := controls[e.Namespace+"\x00"+e.JobID]
	held := c != nil && c.Held
	switch {
	case args.Op == structs.BatchQueueUnhold && !held:
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "job %q in namespace %q is not held in the batch queue: it waits queued%s; only a held job can be released",
			args.JobID, args.Namespace, q.positionText(e))
	case args.Op == structs.BatchQueueHold && held:
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "job %q in namespace %q is already held in the batch queue%s; release it with nomad queue release",
			args.JobID, args.Namespace, q.positionText(e))
	}
	return nil
}

// positionText is " at position N" for a queued entry whose place the
// leader's listing knows, and empty otherwise.
func (q *QueueEndpoint) positionText(e *structs.BatchQueueEntry) string {
	if le := q.srv.batchQueue.Lookup(e.Namespace, e.JobID); le != nil && le.Position > 0 {
		return fmt.Sprintf(" at position %d", le.Position)
	}
	return ""
}

// read serves a read of the queue: on a follower it forwards to the
// leader; on the leader it answers as a blocking query on the queue
// index, with fill writing the reply.
func (q *QueueEndpoint) read(method string, opts *structs.QueryOptions, args, reply any, meta *structs.QueryMeta, fill func(allow func(ns string) bool)) error {
	opts.AllowStale = false
	if done, err := q.srv.forward(method, *opts, args, reply); done {
		return err
	}
	allow, err := q.srv.namespaceFilter(opts.AuthToken, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	q.resetStaleIndex(opts)
	return q.srv.blockingRPC(opts, meta, func(ws memdb.WatchSet, _ *state.StateStore) (uint64, error) {
		index, ch := q.srv.batchQueue.Index()
		ws.Add(ch)
		fill(allow)
		return index + 1, nil
	})
}

// Usage lists the namespaces' decayed usage and fair-share factors, those
// the token may read jobs in.
func (q *QueueEndpoint) Usage(args *structs.BatchQueueUsageRequest, reply *structs.BatchQueueUsageResponse) error {
	return q.read("Queue.Usage", &args.QueryOptions, args, reply, &reply.QueryMeta, func(allow func(string) bool) {
		reply.Usage = slices.DeleteFunc(q.srv.batchQueue.Usage(), func(u *structs.BatchQueueNamespaceUsage) bool {
			return !allow(u.Namespace)
		})
	})
}

// ResetUsage forgets the decayed usage of the request's namespace
// through Raft: its batch allocs' runs before now stop counting. The
// leader stamps the time, so every server applies the same reset. An
// unknown namespace is a 404 naming it.
func (q *QueueEndpoint) ResetUsage(args *structs.BatchQueueUsageResetRequest, reply *structs.BatchQueueUsageResetResponse) error {
	if done, err := q.srv.forward("Queue.ResetUsage", args.WriteRequest, args, reply); done {
		return err
	}
	if args.Namespace == "" {
		args.Namespace = structs.DefaultNamespace
	}
	ns, err := q.srv.State().NamespaceByName(nil, args.Namespace)
	if err != nil {
		return err
	}
	if ns == nil {
		return structs.NewErrRPCCodedf(http.StatusNotFound, "namespace %q not found", args.Namespace)
	}
	args.Time = time.Now().UnixNano()
	_, index, err := q.srv.raftApply(structs.BatchQueueUsageResetRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}
