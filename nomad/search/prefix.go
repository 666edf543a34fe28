package search

import (
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// PrefixContexts are the contexts a prefix search of "all" searches.
var PrefixContexts = []string{
	structs.SearchContextJobs, structs.SearchContextEvals, structs.SearchContextAllocs,
	structs.SearchContextNodes, structs.SearchContextDeployments, structs.SearchContextNodePools,
	structs.SearchContextNamespaces,
}

// Allowed reports whether a may search context ctx in namespace ns
// ("*": some namespace grants it; each result is then checked in its own
// namespace).
func Allowed(a *acl.ACL, ns, ctx string) bool {
	switch ctx {
	case structs.SearchContextJobs, structs.SearchContextEvals, structs.SearchContextAllocs,
		structs.SearchContextDeployments, "volumes", "host_volumes":
		return a.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob)
	case "scaling_policy":
		return a.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob) ||
			a.AllowNamespaceOperation(ns, acl.NamespaceCapabilityListScalingPolicies)
	case structs.SearchContextNamespaces:
		return a.AllowNamespace(ns)
	case structs.SearchContextNodes:
		return a.AllowNodeRead()
	case structs.SearchContextNodePools:
		return a.AllowNodePoolSearch()
	case "vars":
		return a.AllowVariableSearch(ns)
	case "plugins":
		return a.AllowPluginList()
	case "quotas":
		return a.AllowQuotaRead()
	}
	return a.IsManagement()
}

// PrefixIDs returns the IDs (names, for node pools and namespaces) in
// context ctx that start with prefix and that a may read, in namespace ns
// ("*": all), unsorted, and the table whose index answers for them (""
// for none).
func PrefixIDs(ws memdb.WatchSet, st *state.StateStore, a *acl.ACL, ctx, ns, prefix string) ([]string, string, error) {
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
		if !uuidPrefix(prefix) {
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
		if !uuidPrefix(prefix) {
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
		if !uuidPrefix(prefix) {
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
			if a.AllowNodePool(p.Name) {
				ids = append(ids, p.Name)
			}
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

// uuidPrefix reports whether prefix can start a UUID: hex digits and
// hyphens only (an odd length is fine: the state store pads it).
func uuidPrefix(prefix string) bool {
	for _, c := range prefix {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return false
		}
	}
	return true
}
