package command

import (
	"flag"

	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/api/contexts"
	"github.com/posener/complete"
)

// jobFiles predicts job specification files, as Nomad does.
var jobFiles = complete.PredictOr(
	complete.PredictFiles("*.nomad"),
	complete.PredictFiles("*.hcl"),
	complete.PredictFiles("*.json"),
)

// argPredictors predict the arguments of the commands that take an ID,
// a name or a file; the IDs come from the server's prefix search.
var argPredictors = map[string]complete.Predictor{
	"status": predictAll(),

	"job run":            jobFiles,
	"run":                jobFiles,
	"job plan":           jobFiles,
	"plan":               jobFiles,
	"job validate":       jobFiles,
	"validate":           jobFiles,
	"job status":         predictIDs(contexts.Jobs),
	"job stop":           predictIDs(contexts.Jobs),
	"stop":               predictIDs(contexts.Jobs),
	"job inspect":        predictIDs(contexts.Jobs),
	"inspect":            predictIDs(contexts.Jobs),
	"job history":        predictIDs(contexts.Jobs),
	"job revert":         predictIDs(contexts.Jobs),
	"job allocs":         predictIDs(contexts.Jobs),
	"job eval":           predictIDs(contexts.Jobs),
	"job scale":          predictIDs(contexts.Jobs),
	"job restart":        predictIDs(contexts.Jobs),
	"job dispatch":       predictIDs(contexts.Jobs),
	"job periodic force": predictIDs(contexts.Jobs),
	"queue hold":         predictIDs(contexts.Jobs),
	"queue release":      predictIDs(contexts.Jobs),
	"queue top":          predictIDs(contexts.Jobs),

	"alloc status":  predictIDs(contexts.Allocs),
	"alloc logs":    predictIDs(contexts.Allocs),
	"logs":          predictIDs(contexts.Allocs),
	"alloc stop":    predictIDs(contexts.Allocs),
	"alloc exec":    predictIDs(contexts.Allocs),
	"alloc checks":  predictIDs(contexts.Allocs),
	"exec":          predictIDs(contexts.Allocs),
	"alloc restart": predictIDs(contexts.Allocs),
	"alloc signal":  predictIDs(contexts.Allocs),
	"alloc fs":      predictIDs(contexts.Allocs),

	"eval status": predictIDs(contexts.Evals),

	"node status":      predictIDs(contexts.Nodes),
	"node drain":       predictIDs(contexts.Nodes),
	"node eligibility": predictIDs(contexts.Nodes),

	"node pool info":   predictIDs(contexts.NodePools),
	"node pool nodes":  predictIDs(contexts.NodePools),
	"node pool jobs":   predictIDs(contexts.NodePools),
	"node pool delete": predictIDs(contexts.NodePools),

	"namespace status": predictIDs(contexts.Namespaces),
	"namespace delete": predictIDs(contexts.Namespaces),

	"service info":   predictServices(),
	"service delete": predictServices(),

	"operator snapshot restore": complete.PredictFiles("*"),
	"operator snapshot inspect": complete.PredictFiles("*"),
	"fmt":                       complete.PredictFiles("*"),
	"config validate":           complete.PredictFiles("*"),
	"tls ca info":               complete.PredictFiles("*.pem"),
	"tls cert info":             complete.PredictFiles("*.pem"),
}

// predictIDs completes the IDs or names of one kind of object that start
// with the word being typed, through the search API of the agent the
// environment names (NOMAD_ADDR, NOMAD_TOKEN, ...): the flags on the line
// being completed are not parsed, as in Nomad.
func predictIDs(ctx contexts.Context) complete.Predictor {
	return complete.PredictFunc(func(a complete.Args) []string {
		resp, ok := prefixSearch(a.Last, ctx)
		if !ok {
			return nil
		}
		return resp.Matches[ctx]
	})
}

// predictAll completes the IDs and names of every kind of object, for
// nomad status.
func predictAll() complete.Predictor {
	return complete.PredictFunc(func(a complete.Args) []string {
		resp, ok := prefixSearch(a.Last, contexts.All)
		if !ok {
			return nil
		}
		var out []string
		for _, ids := range resp.Matches {
			out = append(out, ids...)
		}
		return out
	})
}

func prefixSearch(prefix string, ctx contexts.Context) (*api.SearchResponse, bool) {
	var af apiFlags
	client, err := af.client()
	if err != nil {
		return nil, false
	}
	// The UUID indexes take whole bytes; the completer then keeps the IDs
	// that start with the whole prefix.
	if ctx != contexts.Jobs && ctx != contexts.Namespaces && ctx != contexts.NodePools {
		prefix = sanitizeUUIDPrefix(prefix)
	}
	resp, _, err := client.Search().PrefixSearch(prefix, ctx, nil)
	if err != nil {
		return nil, false
	}
	return resp, true
}

// flagValuePredictors predict the values of flags that take a file, a
// directory or a namespace; other flags that take a value take anything.
var flagValuePredictors = map[string]complete.Predictor{
	"namespace":   predictIDs(contexts.Namespaces),
	"node-pool":   predictIDs(contexts.NodePools),
	"ca-cert":     complete.PredictFiles("*"),
	"ca-path":     complete.PredictDirs("*"),
	"client-cert": complete.PredictFiles("*"),
	"client-key":  complete.PredictFiles("*"),
	"ca":          complete.PredictFiles("*"),
	"key":         complete.PredictFiles("*"),
	"var-file":    complete.PredictFiles("*"),
	"config":      complete.PredictOr(complete.PredictFiles("*"), complete.PredictDirs("*")),
	"data-dir":    complete.PredictDirs("*"),
}

// flagPredictors lists every flag of the sets for completion: a boolean
// flag takes no value, the others take the values flagValuePredictors
// knows or anything.
func flagPredictors(sets []*flag.FlagSet) complete.Flags {
	out := complete.Flags{}
	for _, fs := range sets {
		fs.VisitAll(func(f *flag.Flag) {
			var p complete.Predictor = complete.PredictAnything
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				p = complete.PredictNothing
			} else if v, ok := flagValuePredictors[f.Name]; ok {
				p = v
			}
			out["-"+f.Name] = p
		})
	}
	return out
}
