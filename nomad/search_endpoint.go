package nomad

import (
	"net/http"
	"slices"
	"sort"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/nomad/search"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Search is the RPC endpoint for ID prefix search, as `nomad status <id>`
// uses it.
type Search struct {
	srv *Server
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
		contexts = search.PrefixContexts
	case structs.SearchContextJobs, structs.SearchContextEvals, structs.SearchContextAllocs, structs.SearchContextNodes,
		structs.SearchContextDeployments, structs.SearchContextNodePools, structs.SearchContextNamespaces,
		"quotas", "scaling_policy", "plugins", "vars", "volumes", "host_volumes":
	default:
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "context must be one of %s or \"all\"; got %q", strings.Join(search.PrefixContexts, ", "), args.Context)
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
			ids, table, err := search.PrefixIDs(ws, st, a, ctx, ns, args.Prefix)
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
	if asked != structs.SearchContextAll && !search.Allowed(a, ns, asked) {
		return nil, nil, structs.ErrPermissionDenied
	}
	return a, slices.DeleteFunc(slices.Clone(contexts), func(ctx string) bool { return !search.Allowed(a, ns, ctx) }), nil
}
