package search

import (
	"slices"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// FuzzyContexts are the contexts whose objects fuzzy search reads, for
// "all"; evals and deployments are searched by ID prefix instead.
var FuzzyContexts = []string{
	structs.SearchContextJobs, structs.SearchContextNodes, structs.SearchContextAllocs,
	structs.SearchContextNodePools, structs.SearchContextNamespaces,
}

// Fuzzy collects the matches of one fuzzy search text across contexts,
// with Nomad's limits: at most FuzzyLimitQuery objects of a context are
// examined and FuzzyLimitResults matches kept per context; a context
// that hit either limit is truncated.
type Fuzzy struct {
	text string
	hits map[string][]hit
	// Truncations records, per context, whether matches were left out.
	Truncations map[string]bool
}

// NewFuzzy starts a search for text, case-insensitively anywhere in a
// name. Truncations of the contexts it fills are recorded in
// truncations.
func NewFuzzy(text string, truncations map[string]bool) *Fuzzy {
	return &Fuzzy{text: strings.ToLower(text), hits: map[string][]hit{}, Truncations: truncations}
}

// Add matches the objects of context ctx (as FuzzyObjects returns them);
// a job's matches fall in the contexts of its groups, tasks, services
// and driver command, image or class too.
func (f *Fuzzy) Add(ctx string, objects []any) {
	f.Truncations[ctx] = false
	for i, obj := range objects[:min(len(objects), structs.FuzzyLimitQuery)] {
		// The last object examined truncates when more were left.
		limited := i == structs.FuzzyLimitQuery-1 && len(objects) > structs.FuzzyLimitQuery
		for mctx, found := range matchObject(obj, f.text) {
			for _, h := range found {
				if len(f.hits[mctx]) >= structs.FuzzyLimitResults {
					f.Truncations[mctx] = true
					break
				}
				f.hits[mctx] = append(f.hits[mctx], h)
				if limited {
					f.Truncations[mctx] = true
					break
				}
			}
		}
	}
}

// Matches returns the matches by context, sorted by where the text
// starts, then by length, then by name.
func (f *Fuzzy) Matches() map[string][]structs.FuzzyMatch {
	out := make(map[string][]structs.FuzzyMatch, len(f.hits))
	for ctx, hs := range f.hits {
		slices.SortFunc(hs, func(a, b hit) int {
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
		out[ctx] = matches
	}
	return out
}

// hit is a match before sorting: score is where in the name the text
// starts.
type hit struct {
	id    string
	scope []string
	score int
}

// FuzzyObjects returns the objects of context ctx that fuzzy search
// reads and a may read, in namespace ns ("*": all), in ID order, and the
// table whose index answers for them ("" for none).
func FuzzyObjects(st *state.StateStore, a *acl.ACL, ctx, ns string) ([]any, string, error) {
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
			if a.AllowNodePool(p) {
				out = append(out, fuzzyNamed{ctx: ctx, name: p, scope: []string{p}})
			}
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

// matchObject returns the matches of text (lower case) in obj, by
// context.
func matchObject(obj any, text string) map[string][]hit {
	out := map[string][]hit{}
	add := func(ctx, name string, scope ...string) {
		if i := strings.Index(strings.ToLower(name), text); i >= 0 && name != "" {
			out[ctx] = append(out[ctx], hit{id: name, scope: scope, score: i})
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
