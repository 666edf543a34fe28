package nomad

import (
	"net/http"
	"slices"
	"strings"

	"github.com/nomadq/nomadq/nomad/search"
	"github.com/nomadq/nomadq/structs"
)

// FuzzySearch matches Text against the names of jobs (and their groups,
// tasks, services and driver command, image or class), nodes, allocs,
// node pools and namespaces, case-insensitively anywhere in the name;
// evals and deployments match by ID prefix (the query's prefix). Results
// sort by where the text starts, then by length, then by name.
func (s *Search) FuzzySearch(args *structs.FuzzySearchRequest, reply *structs.FuzzySearchResponse) error {
	if done, err := s.srv.forward("Search.FuzzySearch", args.QueryOptions, args, reply); done {
		return err
	}
	if n := len(args.Text); n < structs.FuzzyMinTermLength {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "fuzzy search query must be at least %d characters, got %d", structs.FuzzyMinTermLength, n)
	}
	var fuzzy, prefix []string
	switch args.Context {
	case structs.SearchContextAll:
		fuzzy = search.FuzzyContexts
		prefix = []string{structs.SearchContextEvals, structs.SearchContextDeployments}
	case structs.SearchContextJobs, structs.SearchContextNodes, structs.SearchContextAllocs,
		structs.SearchContextNodePools, structs.SearchContextNamespaces, "plugins", "vars":
		fuzzy = []string{args.Context}
	case structs.SearchContextEvals, structs.SearchContextDeployments:
		prefix = []string{args.Context}
	default:
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "context must be one of %s, %s, %s or \"all\"; got %q",
			strings.Join(search.FuzzyContexts, ", "), structs.SearchContextEvals, structs.SearchContextDeployments, args.Context)
	}
	ns := namespaceOf(args.Namespace)
	a, fuzzy, err := s.searchACL(args.AuthToken, ns, args.Context, fuzzy)
	if err != nil {
		return err
	}
	if _, prefix, err = s.searchACL(args.AuthToken, ns, structs.SearchContextAll, prefix); err != nil {
		return err
	}
	st := s.srv.State()
	reply.Matches = map[string][]structs.FuzzyMatch{}
	reply.Truncations = map[string]bool{}
	var tables []string
	for _, ctx := range prefix {
		ids, table, err := search.PrefixIDs(nil, st, a, ctx, ns, args.Prefix)
		if err != nil {
			return err
		}
		if table != "" {
			tables = append(tables, table)
		}
		slices.Sort(ids)
		reply.Truncations[ctx] = len(ids) > structs.SearchMaxResults
		ids = ids[:min(len(ids), structs.SearchMaxResults)]
		matches := make([]structs.FuzzyMatch, 0, len(ids))
		for _, id := range ids {
			matches = append(matches, structs.FuzzyMatch{ID: id})
		}
		reply.Matches[ctx] = matches
	}
	found := search.NewFuzzy(args.Text, reply.Truncations)
	for _, ctx := range fuzzy {
		objects, table, err := search.FuzzyObjects(st, a, ctx, ns)
		if err != nil {
			return err
		}
		if table != "" {
			tables = append(tables, table)
		}
		found.Add(ctx, objects)
	}
	for ctx, matches := range found.Matches() {
		reply.Matches[ctx] = matches
	}
	index, err := maxIndex(st, tables...)
	if err != nil {
		return err
	}
	reply.Index = index
	reply.KnownLeader = s.srv.Leader() != ""
	return nil
}
