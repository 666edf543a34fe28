package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Namespace is the RPC endpoint for namespaces.
type Namespace struct {
	srv *Server
}

// ListNamespaces lists the namespaces whose name starts with the query's
// prefix, ordered by name.
func (n *Namespace) ListNamespaces(args *structs.NamespaceListRequest, reply *structs.NamespaceListResponse) error {
	if done, err := n.srv.forward("Namespace.ListNamespaces", args.QueryOptions, args, reply); done {
		return err
	}
	// With ACLs on, a token sees the namespaces it has any capability in.
	aclObj, _, err := n.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		list, err := st.NamespacesByNamePrefix(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Namespaces = list[:0:0]
		for _, ns := range list {
			if aclObj.AllowNamespace(ns.Name) {
				reply.Namespaces = append(reply.Namespaces, ns)
			}
		}
		return maxIndex(st, state.TableNamespaces)
	})
}

// GetNamespace reads one namespace; Namespace is nil when it does not
// exist.
func (n *Namespace) GetNamespace(args *structs.NamespaceSpecificRequest, reply *structs.SingleNamespaceResponse) error {
	if done, err := n.srv.forward("Namespace.GetNamespace", args.QueryOptions, args, reply); done {
		return err
	}
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		ns, err := st.NamespaceByName(ws, args.Name)
		if err != nil {
			return 0, err
		}
		reply.Namespace = ns
		if ns != nil {
			return ns.ModifyIndex, nil
		}
		return maxIndex(st, state.TableNamespaces)
	})
}

// UpsertNamespaces validates and stores namespaces; one invalid namespace
// stores none.
func (n *Namespace) UpsertNamespaces(args *structs.NamespaceUpsertRequest, reply *structs.GenericResponse) error {
	if done, err := n.srv.forward("Namespace.UpsertNamespaces", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.Namespaces) == 0 {
		return structs.NewBadRequest("must specify at least one namespace")
	}
	for _, ns := range args.Namespaces {
		if ns == nil {
			return structs.NewBadRequest("must specify at least one namespace")
		}
		if err := ns.Validate(); err != nil {
			return structs.NewBadRequestf("Invalid namespace %q: %v", ns.Name, err)
		}
		if err := validateNamespaceMaxRun(ns); err != nil {
			return err
		}
	}
	_, index, err := n.srv.raftApply(structs.NamespaceUpsertRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// DeleteNamespaces deletes namespaces. The default namespace, and a
// namespace that still holds non-terminal jobs or allocations, are
// refused; then none is deleted.
func (n *Namespace) DeleteNamespaces(args *structs.NamespaceDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := n.srv.forward("Namespace.DeleteNamespaces", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.Namespaces) == 0 {
		return structs.NewBadRequest("must specify at least one namespace to delete")
	}
	st := n.srv.State()
	var errs structs.MultiError
	for _, name := range args.Namespaces {
		if name == structs.DefaultNamespace {
			return structs.NewBadRequest("can not delete default namespace")
		}
		jobs, allocs, err := st.NamespaceUsage(name)
		if err != nil {
			return err
		}
		errs.Add(state.NamespaceInUseError(name, n.srv.config.Region, jobs, allocs))
	}
	if err := errs.ErrorOrNil(); err != nil {
		return structs.NewBadRequest(err.Error())
	}
	_, index, err := n.srv.raftApply(structs.NamespaceDeleteRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}
