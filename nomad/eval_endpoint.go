package nomad

import (
	"slices"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Eval is the RPC endpoint for evaluations.
type Eval struct {
	srv *Server
}

// Get reads one evaluation; Eval is nil when it does not exist, or when
// the caller may not read jobs in the eval's own namespace.
func (e *Eval) Get(args *structs.EvalSpecificRequest, reply *structs.SingleEvalResponse) error {
	if done, err := e.srv.forward("Eval.Get", args.QueryOptions, args, reply); done {
		return err
	}
	allow, err := e.srv.namespaceFilter(args.AuthToken, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		eval, err := st.EvalByID(ws, args.EvalID)
		if err != nil {
			return 0, err
		}
		reply.Eval = visible(eval, allow)
		if reply.Eval != nil {
			return eval.ModifyIndex, nil
		}
		return maxIndex(st, "evals")
	})
}

// List lists evaluations, filtered by ID prefix.
func (e *Eval) List(args *structs.EvalListRequest, reply *structs.EvalListResponse) error {
	if done, err := e.srv.forward("Eval.List", args.QueryOptions, args, reply); done {
		return err
	}
	filter, err := structs.NewFilter(args.Filter)
	if err != nil {
		return err
	}
	allow, err := e.srv.namespaceFilter(args.AuthToken, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		var evals []*structs.Evaluation
		var err error
		switch {
		case args.Prefix != "":
			evals, err = st.EvalsByIDPrefix(ws, args.Namespace, args.Prefix)
		case args.Namespace == "*" || args.Namespace == "":
			evals, err = st.Evals(ws)
		default:
			evals, err = st.EvalsByNamespace(ws, args.Namespace)
		}
		if err != nil {
			return 0, err
		}
		evals = slices.DeleteFunc(evals, func(e *structs.Evaluation) bool {
			return !allow(e.Namespace) ||
				args.FilterJobID != "" && e.JobID != args.FilterJobID ||
				args.FilterEvalStatus != "" && e.Status != args.FilterEvalStatus
		})
		if evals, err = structs.KeepMatching(filter, evals, func(e *structs.Evaluation) any { return e }); err != nil {
			return 0, err
		}
		if evals == nil {
			evals = []*structs.Evaluation{}
		}
		reply.Evaluations = evals
		return tableIndex(st, "evals")
	})
}

// Allocations lists the allocations an evaluation created, of those the
// caller may read jobs in the namespace of.
func (e *Eval) Allocations(args *structs.EvalSpecificRequest, reply *structs.EvalAllocationsResponse) error {
	if done, err := e.srv.forward("Eval.Allocations", args.QueryOptions, args, reply); done {
		return err
	}
	allow, err := e.srv.namespaceFilter(args.AuthToken, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		allocs, err := st.AllocsByEval(ws, args.EvalID)
		if err != nil {
			return 0, err
		}
		reply.Allocations = make([]*structs.AllocListStub, 0, len(allocs))
		for _, a := range allocs {
			if visible(a, allow) != nil {
				reply.Allocations = append(reply.Allocations, a.Stub())
			}
		}
		return tableIndex(st, "allocs")
	})
}
