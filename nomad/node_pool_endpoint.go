package nomad

import (
	"sort"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// NodePool is the RPC endpoint for node pools.
type NodePool struct {
	srv *Server
}

// List lists the node pools whose name starts with the query's prefix,
// ordered by name.
func (p *NodePool) List(args *structs.NodePoolListRequest, reply *structs.NodePoolListResponse) error {
	if done, err := p.srv.forward("NodePool.List", args.QueryOptions, args, reply); done {
		return err
	}
	a, _, err := p.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	return p.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		list, err := st.NodePoolsByNamePrefix(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		// Only the pools the token may read, as Nomad lists them.
		reply.NodePools = make([]*structs.NodePool, 0, len(list))
		for _, pool := range list {
			if a.AllowNodePoolOperation(pool.Name, acl.NodePoolCapabilityRead) {
				reply.NodePools = append(reply.NodePools, pool)
			}
		}
		return maxIndex(st, state.TableNodePools)
	})
}

// GetNodePool reads one pool; NodePool is nil when it does not exist.
func (p *NodePool) GetNodePool(args *structs.NodePoolSpecificRequest, reply *structs.SingleNodePoolResponse) error {
	if done, err := p.srv.forward("NodePool.GetNodePool", args.QueryOptions, args, reply); done {
		return err
	}
	return p.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		pool, err := st.NodePoolByName(ws, args.Name)
		if err != nil {
			return 0, err
		}
		reply.NodePool = pool
		if pool != nil {
			return pool.ModifyIndex, nil
		}
		return maxIndex(st, state.TableNodePools)
	})
}

// UpsertNodePools validates and stores pools; one invalid pool stores
// none, and the built-in pools cannot be changed.
func (p *NodePool) UpsertNodePools(args *structs.NodePoolUpsertRequest, reply *structs.GenericResponse) error {
	if done, err := p.srv.forward("NodePool.UpsertNodePools", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.NodePools) == 0 {
		return structs.NewBadRequest("must specify at least one node pool")
	}
	for _, pool := range args.NodePools {
		if pool == nil {
			return structs.NewBadRequest("must specify at least one node pool")
		}
		pool.Canonicalize()
		if err := pool.Validate(); err != nil {
			return structs.NewBadRequestf("invalid node pool %q: %v", pool.Name, err)
		}
		if structs.IsBuiltinNodePool(pool.Name) {
			return structs.NewBadRequestf("modifying node pool %q is not allowed", pool.Name)
		}
	}
	_, index, err := p.srv.raftApply(structs.NodePoolUpsertRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// DeleteNodePools deletes pools. The built-in pools, and a pool that
// still has nodes or non-terminal jobs, are refused; then none is deleted.
func (p *NodePool) DeleteNodePools(args *structs.NodePoolDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := p.srv.forward("NodePool.DeleteNodePools", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.Names) == 0 {
		return structs.NewBadRequest("must specify at least one node pool to delete")
	}
	st := p.srv.State()
	var errs structs.MultiError
	for _, name := range args.Names {
		if name == "" {
			return structs.NewBadRequest("node pool name is empty")
		}
		if structs.IsBuiltinNodePool(name) {
			return structs.NewBadRequestf("deleting built-in node pool %q is not allowed", name)
		}
		nodes, jobs, err := st.NodePoolUsage(name)
		if err != nil {
			return err
		}
		errs.Add(state.NodePoolInUseError(name, p.srv.config.Region, nodes, jobs))
	}
	if err := errs.ErrorOrNil(); err != nil {
		return structs.NewBadRequest(err.Error())
	}
	_, index, err := p.srv.raftApply(structs.NodePoolDeleteRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListNodes lists the nodes of a pool ("all": every node), ordered by
// ID. Nodes is nil when the pool does not exist.
func (p *NodePool) ListNodes(args *structs.NodePoolSpecificRequest, reply *structs.NodePoolNodesResponse) error {
	if done, err := p.srv.forward("NodePool.ListNodes", args.QueryOptions, args, reply); done {
		return err
	}
	return p.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		reply.Nodes = nil
		pool, err := st.NodePoolByName(ws, args.Name)
		if err != nil || pool == nil {
			return 1, err
		}
		var nodes []*structs.Node
		if pool.Name == structs.AllNodePools {
			nodes, err = st.Nodes(ws)
		} else {
			nodes, err = st.NodesByNodePool(ws, pool.Name)
		}
		if err != nil {
			return 0, err
		}
		reply.Nodes = make([]*structs.NodeListStub, 0, len(nodes))
		for _, n := range nodes {
			reply.Nodes = append(reply.Nodes, n.Stub())
		}
		return maxIndex(st, state.TableNodes, state.TableNodePools)
	})
}

// ListJobs lists the jobs that name a pool, in the query's namespace ("*":
// every namespace), ordered by ID. Jobs is nil when the pool does not
// exist.
func (p *NodePool) ListJobs(args *structs.NodePoolSpecificRequest, reply *structs.NodePoolJobsResponse) error {
	if done, err := p.srv.forward("NodePool.ListJobs", args.QueryOptions, args, reply); done {
		return err
	}
	allow, err := p.srv.namespaceFilter(args.AuthToken, acl.NamespaceCapabilityListJobs)
	if err != nil {
		return err
	}
	return p.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		reply.Jobs = nil
		pool, err := st.NodePoolByName(ws, args.Name)
		if err != nil || pool == nil {
			return 1, err
		}
		jobs, err := st.JobsByNodePool(ws, pool.Name)
		if err != nil {
			return 0, err
		}
		ns := args.Namespace
		if ns == "" {
			ns = structs.DefaultNamespace
		}
		reply.Jobs = make([]*structs.JobListStub, 0, len(jobs))
		for _, job := range jobs {
			if ns != "*" && job.Namespace != ns || !allow(job.Namespace) {
				continue
			}
			sum, err := st.JobSummaryByID(ws, job.Namespace, job.ID)
			if err != nil {
				return 0, err
			}
			reply.Jobs = append(reply.Jobs, job.Stub(sum))
		}
		sort.Slice(reply.Jobs, func(a, b int) bool {
			if reply.Jobs[a].ID != reply.Jobs[b].ID {
				return reply.Jobs[a].ID < reply.Jobs[b].ID
			}
			return reply.Jobs[a].Namespace < reply.Jobs[b].Namespace
		})
		return maxIndex(st, state.TableJobs, state.TableJobSummary, state.TableNodePools)
	})
}

// checkNodePool refuses a job that names a node pool that does not
// exist, with Nomad's wording.
func (s *Server) checkNodePool(jobID, pool string) error {
	p, err := s.State().NodePoolByName(nil, pool)
	if err != nil {
		return err
	}
	if p == nil {
		return structs.NewBadRequestf("job %q is in nonexistent node pool %q", jobID, pool)
	}
	return nil
}
