package state

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// stringsIndex makes the keys go-memdb's CompoundIndex of StringFieldIndexes
// made for the same fields, so lookups, prefixes and the rows of a restored
// store are unchanged: whole keys, missing fields with and without
// AllowMissing, every prefix length, and the index table's lowercasing
// (compared as strings: go-memdb treats a nil and an empty key alike).
func TestStringsIndex_KeysAsCompoundIndex(t *testing.T) {
	evalFields := func(obj any) ([3]string, error) {
		e := obj.(*structs.Evaluation)
		return [3]string{e.Namespace, e.JobID, e.Status}, nil
	}
	for _, allowMissing := range []bool{false, true} {
		ours := &stringsIndex{name: "test", n: 3, allowMissing: allowMissing, fields: evalFields}
		theirs := &memdb.CompoundIndex{AllowMissing: allowMissing, Indexes: []memdb.Indexer{
			&memdb.StringFieldIndex{Field: "Namespace"},
			&memdb.StringFieldIndex{Field: "JobID"},
			&memdb.StringFieldIndex{Field: "Status"},
		}}
		for _, e := range []*structs.Evaluation{
			{Namespace: "default", JobID: "web", Status: "pending"},
			{Namespace: "default", JobID: "", Status: "pending"},
			{Namespace: "default", JobID: "web", Status: ""},
			{Namespace: "", JobID: "web", Status: "pending"},
			{Namespace: "prod", JobID: "a\x00b", Status: "blocked"},
		} {
			okA, keyA, errA := ours.FromObject(e)
			okB, keyB, errB := theirs.FromObject(e)
			must.NoError(t, errA)
			must.NoError(t, errB)
			must.Eq(t, okB, okA, must.Sprintf("allowMissing %v, %+v", allowMissing, e))
			must.Eq(t, string(keyB), string(keyA), must.Sprintf("allowMissing %v, %+v", allowMissing, e))
		}
		for _, args := range [][]any{{}, {"default"}, {"default", ""}, {"default", "web"}, {"default", "web", ""}, {"default", "web", "pending"}} {
			a, errA := ours.PrefixFromArgs(args...)
			b, errB := theirs.PrefixFromArgs(args...)
			must.NoError(t, errA)
			must.NoError(t, errB)
			must.Eq(t, string(b), string(a), must.Sprintf("prefix %q", args))
		}
		a, err := ours.FromArgs("default", "web", "pending")
		must.NoError(t, err)
		b, err := theirs.FromArgs("default", "web", "pending")
		must.NoError(t, err)
		must.Eq(t, string(b), string(a))
		_, err = ours.FromArgs("default", "web")
		must.ErrorContains(t, err, "want 3 arguments, got 2")
		_, err = ours.PrefixFromArgs("a", "b", "c", "d")
		must.ErrorContains(t, err, "at most 3 arguments")
		_, err = ours.FromArgs("default", 7, "pending")
		must.ErrorContains(t, err, "argument must be a string")
	}

	ours := &stringsIndex{name: "index", n: 1, lower: true, fields: func(obj any) ([3]string, error) {
		return [3]string{obj.(*IndexEntry).Key}, nil
	}}
	theirs := &memdb.StringFieldIndex{Field: "Key", Lowercase: true}
	for _, k := range []string{"allocs", "Job_Summary", ""} {
		okA, keyA, _ := ours.FromObject(&IndexEntry{Key: k})
		okB, keyB, _ := theirs.FromObject(&IndexEntry{Key: k})
		must.Eq(t, okB, okA)
		must.Eq(t, string(keyB), string(keyA))
		a, _ := ours.FromArgs(k)
		b, _ := theirs.FromArgs(k)
		must.Eq(t, string(b), string(a))
		a, _ = ours.PrefixFromArgs(k)
		b, _ = theirs.PrefixFromArgs(k)
		must.Eq(t, string(b), string(a))
	}
}
