package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Alloc is the RPC endpoint for allocations.
type Alloc struct {
	srv *Server
}

// Get reads one allocation; Alloc is nil when it does not exist.
func (a *Alloc) Get(args *structs.AllocSpecificRequest, reply *structs.SingleAllocResponse) error {
	if done, err := a.srv.forward("Alloc.Get", args.QueryOptions, args, reply); done {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		alloc, err := st.AllocByID(ws, args.AllocID)
		if err != nil {
			return 0, err
		}
		reply.Alloc = alloc
		if alloc != nil {
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
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		reply.Allocs = reply.Allocs[:0]
		var max uint64 = 1
		for _, id := range args.AllocIDs {
			alloc, err := st.AllocByID(ws, id)
			if err != nil {
				return 0, err
			}
			if alloc == nil {
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
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		var allocs []*structs.Allocation
		var err error
		if args.Prefix != "" {
			allocs, err = st.AllocsByIDPrefix(ws, args.Namespace, args.Prefix)
		} else {
			allocs, err = st.Allocs(ws)
		}
		if err != nil {
			return 0, err
		}
		reply.Allocations = make([]*structs.AllocListStub, 0, len(allocs))
		for _, alloc := range allocs {
			reply.Allocations = append(reply.Allocations, alloc.Stub())
		}
		return maxIndex(st, "allocs")
	})
}
