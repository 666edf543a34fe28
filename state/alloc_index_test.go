package state

import (
	"fmt"
	"testing"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// The allocs' node and job indexes build the keys memdb's CompoundIndex
// built from the same fields, for objects, lookups and prefix scans; the
// object keys leave room for the ID memdb appends.
func TestAllocIndexes_KeysOfTheCompoundIndexes(t *testing.T) {
	oldNode := &memdb.CompoundIndex{Indexes: []memdb.Indexer{
		&memdb.StringFieldIndex{Field: "NodeID"},
		&memdb.ConditionalIndex{Conditional: func(obj any) (bool, error) { return obj.(*structs.Allocation).TerminalStatus(), nil }},
	}}
	oldJob := &memdb.CompoundIndex{Indexes: []memdb.Indexer{
		&memdb.StringFieldIndex{Field: "Namespace"},
		&memdb.StringFieldIndex{Field: "JobID"},
	}}
	allocs := []*structs.Allocation{
		{ID: newID(), Namespace: "default", JobID: "web", NodeID: newID(), ClientStatus: structs.AllocClientStatusRunning},
		{ID: newID(), Namespace: "prod", JobID: "batch/periodic-1", NodeID: newID(), ClientStatus: structs.AllocClientStatusComplete},
		{ID: newID(), Namespace: "default", JobID: "web", DesiredStatus: structs.AllocDesiredStatusStop},
		{ID: newID(), Namespace: "", JobID: "web", NodeID: "n"},
		{ID: newID(), Namespace: "default", JobID: "", NodeID: "n"},
	}
	for i, a := range allocs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for _, pair := range []struct {
				old memdb.SingleIndexer
				new memdb.SingleIndexer
			}{{oldNode, allocNodeIndex{}}, {oldJob, allocJobIndex{}}} {
				okOld, keyOld, errOld := pair.old.FromObject(a)
				okNew, keyNew, errNew := pair.new.FromObject(a)
				must.NoError(t, errOld)
				must.NoError(t, errNew)
				must.Eq(t, okOld, okNew)
				must.Eq(t, keyOld, keyNew)
				if okNew {
					must.GreaterEq(t, len(keyNew)+allocIDKeyLen, cap(keyNew))
				}
			}
		})
	}
	for _, args := range [][]any{{"n1", true}, {"n1", false}, {"", false}} {
		want, err := oldNode.FromArgs(args...)
		must.NoError(t, err)
		got, err := allocNodeIndex{}.FromArgs(args...)
		must.NoError(t, err)
		must.Eq(t, string(want), string(got))
	}
	for _, args := range [][]any{{"n1"}, {""}} {
		want, err := oldNode.PrefixFromArgs(args...)
		must.NoError(t, err)
		got, err := allocNodeIndex{}.PrefixFromArgs(args...)
		must.NoError(t, err)
		must.Eq(t, string(want), string(got))
	}
	for _, args := range [][]any{{"default", "web"}, {"", ""}} {
		want, err := oldJob.FromArgs(args...)
		must.NoError(t, err)
		got, err := allocJobIndex{}.FromArgs(args...)
		must.NoError(t, err)
		must.Eq(t, string(want), string(got))
	}
	for _, args := range [][]any{{"default"}, {"default", ""}, {"default", "we"}, {""}} {
		want, err := oldJob.PrefixFromArgs(args...)
		must.NoError(t, err)
		got, err := allocJobIndex{}.PrefixFromArgs(args...)
		must.NoError(t, err)
		must.Eq(t, string(want), string(got))
	}
	// Wrong arguments are errors, as they were.
	for _, args := range [][]any{{"n1"}, {"n1", "yes"}, {1, true}} {
		_, err := allocNodeIndex{}.FromArgs(args...)
		must.Error(t, err)
	}
	for _, args := range [][]any{{"default"}, {"default", 3}} {
		_, err := allocJobIndex{}.FromArgs(args...)
		must.Error(t, err)
	}
	// As with the compound index, the terminal flag is no prefix.
	_, err := oldNode.PrefixFromArgs("n1", true)
	must.Error(t, err)
	_, err = allocNodeIndex{}.PrefixFromArgs("n1", true)
	must.Error(t, err)
}
