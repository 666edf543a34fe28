package nomad

import (
	"net/http"
	"slices"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// fuzzyContexts are the contexts whose objects fuzzy search reads, for
// "all"; evals and deployments are searched by ID prefix instead.
var fuzzyContexts = []string{
	structs.SearchContextJobs, structs.SearchContextNodes, structs.SearchContextAllocs,
	structs.SearchContextNodePools, structs.SearchContextNamespaces,
}

// fuzzyHit is a match before sorting: score is where in the name the
// text starts.
type fuzzyHit struct {
	id    string
	scope []string
	score int
}

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
		fuzzy = fuzzyContexts
		prefix = []string{structs.SearchContextEvals, structs.SearchContextDeployments}
	case structs.SearchContextJobs, structs.SearchContextNodes, structs.SearchContextAllocs,
		structs.SearchContextNodePools, structs.SearchContextNamespaces, "plugins", "vars":
		fuzzy = []string{args.Context}
	case structs.SearchContextEvals, structs.SearchContextDeployments:
		prefix = []string{args.Context}
	default:
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "context must be one of %s, %s, %s or \"all\"; got %q",
			strings.Join(fuzzyContexts, ", "), structs.SearchContextEvals, structs.SearchContextDeployments, args.Context)
	}
	text := strings.ToLower(args.Text)
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
		ids, table, err := searchContext(nil, st, a, ctx, ns, args.Prefix)
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
	hits := map[string][]fuzzyHit{}
	for _, ctx := range fuzzy {
		reply.Truncations[ctx] = false
		objects, table, err := fuzzyObjects(st, a, ctx, ns)
		if err != nil {
			return err
		}
		if table != "" {
			tables = append(tables, table)
		}
		for i, obj := range objects[:min(len(objects), structs.FuzzyLimitQuery)] {
			// The last object examined truncates when more were left.
			limited := i == structs.FuzzyLimitQuery-1 && len(objects) > structs.FuzzyLimitQuery
			for mctx, found := range fuzzyMatchObject(obj, text) {
				for _, hit := range found {
					if len(hits[mctx]) >= structs.FuzzyLimitResults {
						reply.Truncations[mctx] = true
						break
					}
					hits[mctx] = append(hits[mctx], hit)
					if limited {
						reply.Truncations[mctx] = true
						break
					}
				}
			}
		}
	}
	for ctx, hs := range hits {
		slices.SortFunc(hs, func(a, b fuzzyHit) int {
			if a.score != b.score {
				return a.score - b.score
			}
			if len(a.id) != len(b.id) {
				return len(a.id) - len(b.id)
			}
			return strings.Compare(a.id, b.id)
		})
		matches := make([]structs.FuzzyMatch, 0, len(hs))
		for _, h := range hs {
			matches = append(matches, structs.FuzzyMatch{ID: h.id, Scope: h.scope})
		}
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

// fuzzyObjects returns the objects of a context that fuzzy search reads,
// in ID order, and the table that indexes them.
func fuzzyObjects(st *state.StateStore, a *acl.ACL, ctx, ns string) ([]any, string, error) {
	var out []any
	readJob := a.AllowNamespaceOperationFunc(acl.NamespaceCapabilityReadJob)
	var ws memdb.WatchSet
	switch ctx {
	case structs.SearchContextJobs:
		var jobs []*structs.Job
		var err error
		if ns == "*" {
			jobs, err = st.Jobs(ws)
		} else {
			jobs, err = st.JobsByNamespace(ws, ns)
		}
		if err != nil {
			return nil, "", err
		}
		for _, j := range jobs {
			if readJob(j.Namespace) {
				out = append(out, j)
			}
		}
		return out, state.TableJobs, nil
	case structs.SearchContextNodes:
		nodes, err := st.Nodes(ws)
		if err != nil {
			return nil, "", err
		}
		for _, n := range nodes {
			out = append(out, n)
		}
		return out, state.TableNodes, nil
	case structs.SearchContextAllocs:
		allocs, err := st.Allocs(ws)
		if err != nil {
			return nil, "", err
		}
		for _, alloc := range allocs {
			if (ns == "*" || alloc.Namespace == ns) && readJob(alloc.Namespace) {
				out = append(out, alloc)
			}
		}
		return out, state.TableAllocs, nil
	case structs.SearchContextNodePools:
		for _, p := range []string{structs.AllNodePools, structs.DefaultNodePool} {
			out = append(out, fuzzyNamed{ctx: ctx, name: p, scope: []string{p}})
		}
		return out, "", nil
	case structs.SearchContextNamespaces:
		if !a.AllowNamespace(structs.DefaultNamespace) {
			return nil, "", nil
		}
		return []any{fuzzyNamed{ctx: ctx, name: structs.DefaultNamespace}}, "", nil
	}
	return nil, "", nil // plugins, variables: nomadq has none
}

// fuzzyNamed is an object known only by name (a node pool, a namespace).
type fuzzyNamed struct {
	ctx   string
	name  string
	scope []string
}

// fuzzyMatchObject returns the matches of text in obj, by context.
func fuzzyMatchObject(obj any, text string) map[string][]fuzzyHit {
	out := map[string][]fuzzyHit{}
	add := func(ctx, name string, scope ...string) {
		if i := strings.Index(strings.ToLower(name), text); i >= 0 && name != "" {
			out[ctx] = append(out[ctx], fuzzyHit{id: name, scope: scope, score: i})
		}
	}
	switch o := obj.(type) {
	case *structs.Job:
		ns, job := o.Namespace, o.ID
		add(structs.SearchContextJobs, o.Name, ns, job)
		for _, g := range o.TaskGroups {
			add(structs.SearchContextGroups, g.Name, ns, job)
			for _, svc := range g.Services {
				add(structs.SearchContextServices, svc.Name, ns, job, g.Name)
			}
			for _, t := range g.Tasks {
				add(structs.SearchContextTasks, t.Name, ns, job, g.Name)
				for _, svc := range t.Services {
					add(structs.SearchContextServices, svc.Name, ns, job, g.Name, t.Name)
				}
				switch t.Driver {
				case "docker":
					add(structs.SearchContextImages, configString(t.Config, "image"), ns, job, g.Name, t.Name)
				case "exec", "raw_exec":
					add(structs.SearchContextCommands, configString(t.Config, "command"), ns, job, g.Name, t.Name)
				case "java":
					add(structs.SearchContextClasses, configString(t.Config, "class"), ns, job, g.Name, t.Name)
				}
			}
		}
	case *structs.Node:
		add(structs.SearchContextNodes, o.Name, o.ID)
	case *structs.Allocation:
		add(structs.SearchContextAllocs, o.Name, o.Namespace, o.ID)
	case fuzzyNamed:
		add(o.ctx, o.name, o.scope...)
	}
	return out
}

// configString is a task driver config value when it is a string.
func configString(cfg map[string]any, key string) string {
	s, _ := cfg[key].(string)
	return s
}
