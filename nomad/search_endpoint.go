package nomad

import (
	"net/http"
	"slices"
	"sort"
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Search is the RPC endpoint for ID prefix search, as `nomad status <id>`
// uses it.
type Search struct {
	srv *Server
}

// searchContexts are the contexts searched for "all".
var searchContexts = []string{
	structs.SearchContextJobs, structs.SearchContextEvals, structs.SearchContextAllocs,
	structs.SearchContextNodes, structs.SearchContextDeployments, structs.SearchContextNodePools,
	structs.SearchContextNamespaces,
}

// PrefixSearch returns, per context, the IDs that start with the prefix,
// at most SearchMaxResults each.
func (s *Search) PrefixSearch(args *structs.SearchRequest, reply *structs.SearchResponse) error {
	if done, err := s.srv.forward("Search.PrefixSearch", args.QueryOptions, args, reply); done {
		return err
	}
	contexts := []string{args.Context}
	switch args.Context {
	case structs.SearchContextAll:
		contexts = searchContexts
	case structs.SearchContextJobs, structs.SearchContextEvals, structs.SearchContextAllocs, structs.SearchContextNodes,
		structs.SearchContextDeployments, structs.SearchContextNodePools, structs.SearchContextNamespaces,
		"quotas", "scaling_policy", "plugins", "vars", "volumes", "host_volumes":
	default:
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "context must be one of %s or \"all\"; got %q", strings.Join(searchContexts, ", "), args.Context)
	}
	ns := namespaceOf(args.Namespace)
	a, contexts, err := s.searchACL(args.AuthToken, ns, args.Context, contexts)
	if err != nil {
		return err
	}
	return s.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		reply.Matches = map[string][]string{}
		reply.Truncations = map[string]bool{}
		var tables []string
		for _, ctx := range contexts {
			ids, table, err := searchContext(ws, st, a, ctx, ns, args.Prefix)
			if err != nil {
				return 0, err
			}
			if table != "" {
				tables = append(tables, table)
			}
			sort.Strings(ids)
			if len(ids) > structs.SearchMaxResults {
				ids = ids[:structs.SearchMaxResults]
				reply.Truncations[ctx] = true
			} else {
				reply.Truncations[ctx] = false
			}
			if ids == nil {
				ids = []string{}
			}
			reply.Matches[ctx] = ids
		}
		return maxIndex(st, tables...)
	})
}

// searchACL resolves the caller's ACL for a search in namespace ns and
// keeps of contexts those it may search, as Nomad does: a context asked
// for by name that the token may not search is refused, and "all" drops
// the contexts it may not search.
func (s *Search) searchACL(secret, ns, asked string, contexts []string) (*acl.ACL, []string, error) {
	a, _, err := s.srv.ResolveACL(secret)
	if err != nil {
		return nil, nil, err
	}
	if asked != structs.SearchContextAll && !searchContextAllowed(a, ns, asked) {
		return nil, nil, structs.ErrPermissionDenied
	}
	return a, slices.DeleteFunc(slices.Clone(contexts), func(ctx string) bool { return !searchContextAllowed(a, ns, ctx) }), nil
}

// searchContextAllowed reports whether a may search context ctx in
// namespace ns ("*": some namespace grants it; each result is then
// checked in its own namespace).
func searchContextAllowed(a *acl.ACL, ns, ctx string) bool {
	switch ctx {
	case structs.SearchContextJobs, structs.SearchContextEvals, structs.SearchContextAllocs,
		structs.SearchContextDeployments, "volumes", "host_volumes":
		return a.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob)
	case "scaling_policy":
		return a.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob) ||
			a.AllowNamespaceOperation(ns, acl.NamespaceCapabilityListScalingPolicies)
	case structs.SearchContextNamespaces:
		return a.AllowNamespace(ns)
	case structs.SearchContextNodes, structs.SearchContextNodePools:
		return a.AllowNodeRead()
	case "vars":
		return a.AllowVariableSearch(ns)
	case "plugins":
		return a.AllowPluginList()
	case "quotas":
		return a.AllowQuotaRead()
	}
	return a.IsManagement()
}

func searchContext(ws memdb.WatchSet, st *state.StateStore, a *acl.ACL, ctx, ns, prefix string) ([]string, string, error) {
	var ids []string
	readJob := a.AllowNamespaceOperationFunc(acl.NamespaceCapabilityReadJob)
	switch ctx {
	case structs.SearchContextJobs:
		var jobs []*structs.Job
		var err error
		if ns == "*" {
			jobs, err = st.Jobs(ws)
		} else {
			jobs, err = st.JobsByIDPrefix(ws, ns, prefix)
		}
		if err != nil {
			return nil, "", err
		}
		for _, j := range jobs {
			if strings.HasPrefix(j.ID, prefix) && readJob(j.Namespace) {
				ids = append(ids, j.ID)
			}
		}
		return ids, state.TableJobs, nil
	case structs.SearchContextEvals:
		if !evenHex(prefix) {
			return nil, state.TableEvals, nil
		}
		evals, err := st.EvalsByIDPrefix(ws, ns, prefix)
		if err != nil {
			return nil, "", err
		}
		for _, e := range evals {
			if readJob(e.Namespace) {
				ids = append(ids, e.ID)
			}
		}
		return ids, state.TableEvals, nil
	case structs.SearchContextAllocs:
		if !evenHex(prefix) {
			return nil, state.TableAllocs, nil
		}
		allocs, err := st.AllocsByIDPrefix(ws, ns, prefix)
		if err != nil {
			return nil, "", err
		}
		for _, alloc := range allocs {
			if readJob(alloc.Namespace) {
				ids = append(ids, alloc.ID)
			}
		}
		return ids, state.TableAllocs, nil
	case structs.SearchContextNodes:
		if !evenHex(prefix) {
			return nil, state.TableNodes, nil
		}
		nodes, err := st.NodesByIDPrefix(ws, prefix)
		if err != nil {
			return nil, "", err
		}
		for _, n := range nodes {
			ids = append(ids, n.ID)
		}
		return ids, state.TableNodes, nil
	case structs.SearchContextNodePools:
		pools, err := st.NodePoolsByNamePrefix(ws, prefix)
		if err != nil {
			return nil, "", err
		}
		for _, p := range pools {
			ids = append(ids, p.Name)
		}
		return ids, state.TableNodePools, nil
	case structs.SearchContextNamespaces:
		list, err := st.NamespacesByNamePrefix(ws, prefix)
		if err != nil {
			return nil, "", err
		}
		for _, n := range list {
			if a.AllowNamespace(n.Name) {
				ids = append(ids, n.Name)
			}
		}
		return ids, state.TableNamespaces, nil
	}
	return nil, "", nil // deployments, volumes, ...: nomadq has none
}

// evenHex reports whether prefix can start a UUID: hex digits and hyphens
// only (an odd length is fine: the state store pads it).
func evenHex(prefix string) bool {
	for _, c := range prefix {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return false
		}
	}
	return true
}
