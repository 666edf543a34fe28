package nomad

import (
	"net/http"
	"slices"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Alloc is the RPC endpoint for allocations.
type Alloc struct {
	srv *Server
}

// Get reads one allocation; Alloc is nil when it does not exist, or
// when the caller may not read jobs in the alloc's own namespace (the
// answer is then the same as for a missing alloc, index included).
func (a *Alloc) Get(args *structs.AllocSpecificRequest, reply *structs.SingleAllocResponse) error {
	if done, err := a.srv.forward("Alloc.Get", args.QueryOptions, args, reply); done {
		return err
	}
	allow, err := a.srv.namespaceFilter(args.AuthToken, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		alloc, err := st.AllocByID(ws, args.AllocID)
		if err != nil {
			return 0, err
		}
		reply.Alloc = visible(alloc, allow)
		if reply.Alloc != nil {
			return alloc.ModifyIndex, nil
		}
		return maxIndex(st, "allocs")
	})
}

// GetAllocs reads several allocations; clients use it to fetch what
// Node.GetClientAllocs said changed. Unknown IDs are skipped.
func (a *Alloc) GetAllocs(args *structs.AllocsGetRequest, reply *structs.AllocsGetResponse) error {
	if done, err := a.srv.forward("Alloc.GetAllocs", args.QueryOptions, args, reply); done {
		return err
	}
	allow, err := a.srv.namespaceFilter(args.AuthToken, acl.NamespaceCapabilityReadJob)
	if err != nil {
		// No ACL token: the caller is a client with its node's secret,
		// and the rule (nodeSecret) found every alloc asked for on its
		// node.
		if nodeSecret(a.srv, acl.DenyAll, nil, args) != nil {
			return err
		}
		allow = func(string) bool { return true }
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		reply.Allocs = reply.Allocs[:0]
		var max uint64 = 1
		for _, id := range args.AllocIDs {
			alloc, err := st.AllocByID(ws, id)
			if err != nil {
				return 0, err
			}
			if visible(alloc, allow) == nil {
				continue
			}
			reply.Allocs = append(reply.Allocs, alloc)
			if alloc.ModifyIndex > max {
				max = alloc.ModifyIndex
			}
		}
		return max, nil
	})
}

// List lists allocations, filtered by ID prefix.
func (a *Alloc) List(args *structs.AllocListRequest, reply *structs.AllocListResponse) error {
	if done, err := a.srv.forward("Alloc.List", args.QueryOptions, args, reply); done {
		return err
	}
	filter, err := structs.NewFilter(args.Filter)
	if err != nil {
		return err
	}
	allow, err := a.srv.namespaceFilter(args.AuthToken, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	ns := namespaceOf(args.Namespace)
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		var allocs []*structs.Allocation
		var err error
		if args.Prefix != "" {
			allocs, err = st.AllocsByIDPrefix(ws, ns, args.Prefix)
		} else {
			allocs, err = st.Allocs(ws)
		}
		if err != nil {
			return 0, err
		}
		// The listing answers the query's namespace only, and of "*" the
		// namespaces the token may read jobs in.
		allocs = slices.DeleteFunc(allocs, func(a *structs.Allocation) bool {
			return ns != "*" && a.Namespace != ns || !allow(a.Namespace)
		})
		if allocs, err = structs.KeepMatching(filter, allocs, func(a *structs.Allocation) any { return a }); err != nil {
			return 0, err
		}
		reply.Allocations = make([]*structs.AllocListStub, 0, len(allocs))
		for _, alloc := range allocs {
			stub := alloc.Stub()
			if args.Resources {
				stub.AllocatedResources = alloc.AllocatedResources
			}
			reply.Allocations = append(reply.Allocations, stub)
		}
		// 0 while no alloc was ever written, as Nomad answers.
		return tableIndex(st, "allocs")
	})
}

// Stop marks an allocation to be migrated (stopped and placed again by
// the scheduler) and creates the eval that does it, in one Raft entry.
func (a *Alloc) Stop(args *structs.AllocStopRequest, reply *structs.AllocStopResponse) error {
	if done, err := a.srv.forward("Alloc.Stop", args.WriteRequest, args, reply); done {
		return err
	}
	if args.AllocID == "" {
		return structs.NewErrRPCCoded(http.StatusBadRequest, "missing allocation ID")
	}
	if len(args.AllocID) != 36 {
		return structs.NewErrRPCCoded(http.StatusNotFound, "alloc not found")
	}
	alloc, err := a.srv.State().AllocByID(nil, args.AllocID)
	if err != nil {
		return err
	}
	if alloc == nil || alloc.Job == nil {
		return structs.NewErrRPCCoded(http.StatusNotFound, "alloc not found")
	}
	// The alloc's namespace, not the one the request names, decides; a
	// caller that may not even read it learns nothing of it.
	aclObj, _, err := a.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowNamespaceOperation(alloc.Namespace, acl.NamespaceCapabilityReadJob) {
		return structs.NewErrRPCCoded(http.StatusNotFound, "alloc not found")
	}
	if !aclObj.AllowNamespaceOperation(alloc.Namespace, acl.NamespaceCapabilityAllocLifecycle) {
		return structs.ErrPermissionDenied
	}
	now := time.Now().UnixNano()
	eval := &structs.Evaluation{
		ID:             structs.GenerateUUID(),
		Namespace:      alloc.Namespace,
		Priority:       alloc.Job.Priority,
		Type:           alloc.Job.Type,
		TriggeredBy:    structs.EvalTriggerAllocStop,
		JobID:          alloc.JobID,
		JobModifyIndex: alloc.Job.JobModifyIndex,
		Status:         structs.EvalStatusPending,
		CreateTime:     now,
		ModifyTime:     now,
	}
	req := &structs.AllocUpdateDesiredTransitionRequest{
		Allocs: map[string]*structs.DesiredTransition{alloc.ID: {
			Migrate:         new(true),
			Reschedule:      new(args.Reschedule),
			NoShutdownDelay: new(args.NoShutdownDelay),
		}},
		Evals:        []*structs.Evaluation{eval},
		WriteRequest: args.WriteRequest,
	}
	_, index, err := a.srv.raftApply(structs.AllocUpdateDesiredTransitionRequestType, req)
	if err != nil {
		return codeNotFound(err)
	}
	reply.EvalID = eval.ID
	reply.Index = index
	return nil
}
