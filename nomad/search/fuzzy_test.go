package search

import (
	"fmt"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// TestFuzzy_OrderScopesAndLimits: matches sort by where the text starts,
// then length, then name; a job's groups and tasks match in their own
// contexts with the job as scope; a context past FuzzyLimitResults is
// truncated, and one with more objects than FuzzyLimitQuery too.
func TestFuzzy_OrderScopesAndLimits(t *testing.T) {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	for i, id := range []string{"web-api", "api", "my-api", "apix"} {
		must.NoError(t, st.UpsertJob(uint64(10+i), mock.Job(id)))
	}
	objects, table, err := FuzzyObjects(st, acl.Management, structs.SearchContextJobs, "*")
	must.NoError(t, err)
	must.Eq(t, state.TableJobs, table)

	truncations := map[string]bool{}
	f := NewFuzzy("API", truncations)
	f.Add(structs.SearchContextJobs, objects)
	matches := f.Matches()
	var ids []string
	for _, m := range matches[structs.SearchContextJobs] {
		ids = append(ids, m.ID)
	}
	must.Eq(t, []string{"api", "apix", "my-api", "web-api"}, ids)
	must.Eq(t, []string{"default", "api"}, matches[structs.SearchContextJobs][0].Scope)
	must.False(t, truncations[structs.SearchContextJobs])

	many := make([]any, structs.FuzzyLimitQuery+5)
	for i := range many {
		many[i] = &structs.Node{ID: fmt.Sprint(i), Name: fmt.Sprintf("node-%03d", i)}
	}
	f = NewFuzzy("node", truncations)
	f.Add(structs.SearchContextNodes, many)
	must.Len(t, structs.FuzzyLimitQuery, f.Matches()[structs.SearchContextNodes])
	must.True(t, truncations[structs.SearchContextNodes], must.Sprint("more nodes than were examined"))
}

// TestPrefixIDs_UUIDContextsNeedHex: a prefix that cannot start a UUID
// finds no eval, alloc or node, without reading the table.
func TestPrefixIDs_UUIDContextsNeedHex(t *testing.T) {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	node := mock.Node("aaaa0000-0000-0000-0000-000000000001")
	must.NoError(t, st.UpsertNode(5, node))
	ids, table, err := PrefixIDs(nil, st, acl.Management, structs.SearchContextNodes, "*", "aaaa")
	must.NoError(t, err)
	must.Eq(t, []string{node.ID}, ids)
	must.Eq(t, state.TableNodes, table)
	ids, _, err = PrefixIDs(nil, st, acl.Management, structs.SearchContextNodes, "*", "zz")
	must.NoError(t, err)
	must.SliceEmpty(t, ids)
	must.False(t, Allowed(acl.DenyAll, "default", structs.SearchContextJobs))
}
