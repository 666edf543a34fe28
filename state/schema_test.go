package state

import (
	"bytes"
	"cmp"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// The UUID index keeps one hex digit a byte: keys sort as the IDs do, no
// key byte exceeds 15 (so no radix node has more than 16 edges), and any
// prefix, odd or across a dash, selects what strings.HasPrefix selects.
func TestUUIDIndex_SortsAsIDsAndTakesAnyPrefix(t *testing.T) {
	idx := uuidIndexer("ID", func(obj any) string { return obj.(*structs.Allocation).ID })
	ids := make([]string, 200)
	keys := make(map[string][]byte)
	for i := range ids {
		ids[i] = newID()
		ok, key, err := idx.FromObject(&structs.Allocation{ID: ids[i]})
		must.NoError(t, err)
		must.True(t, ok)
		must.SliceLen(t, 32, key)
		for _, b := range key {
			must.Less(t, 16, b)
		}
		keys[ids[i]] = key
	}
	byKey := slices.Clone(ids)
	slices.SortFunc(byKey, func(a, b string) int { return bytes.Compare(keys[a], keys[b]) })
	slices.Sort(ids)
	must.Eq(t, ids, byKey)

	for _, n := range []int{1, 5, 8, 9, 10, 13, 36} {
		prefix := ids[0][:n]
		p, err := idx.PrefixFromArgs(prefix)
		must.NoError(t, err)
		for _, id := range ids {
			must.Eq(t, strings.HasPrefix(id, prefix), bytes.HasPrefix(keys[id], p), must.Sprintf("prefix %q, id %s", prefix, id))
		}
	}

	ok, _, err := idx.FromObject(&structs.Allocation{})
	must.NoError(t, err)
	must.False(t, ok, must.Sprint("an empty ID is not indexed"))
	// A lookup by a string that is no UUID finds nothing, and is no
	// error; storing an object with such an ID is one.
	for _, bad := range []string{"alloc-1", strings.Repeat("g", 36), strings.ReplaceAll(ids[0], "-", "x"), "../../etc/passwd", "\x00"} {
		whole, err := idx.FromArgs(bad)
		must.NoError(t, err)
		prefix, err := idx.PrefixFromArgs(bad)
		must.NoError(t, err)
		for _, key := range keys {
			must.False(t, bytes.Equal(key, whole), must.Sprintf("%q", bad))
			must.False(t, bytes.HasPrefix(key, prefix), must.Sprintf("%q", bad))
		}
		_, _, err = idx.FromObject(&structs.Allocation{ID: bad})
		must.ErrorContains(t, err, "is not a UUID")
	}
	prefix, err := idx.PrefixFromArgs("abc-")
	must.NoError(t, err)
	must.Eq(t, noUUID, prefix, must.Sprint("a dash where a UUID has none"))
	_, err = idx.FromArgs(42)
	must.ErrorContains(t, err, "argument must be a string")
}

// Raft indexes sort as numbers in the uint index, with no key byte over 15.
func TestUintIndex_SortsAsNumbers(t *testing.T) {
	idx := uintIndexer("CreateIndex", func(obj any) (uint64, bool) { return obj.(*structs.Allocation).CreateIndex, true })
	values := []uint64{0, 1, 15, 16, 255, 256, 4095, 4096, 1 << 32, 1<<64 - 1}
	var prev []byte
	for i, v := range values {
		_, key, err := idx.FromObject(&structs.Allocation{CreateIndex: v})
		must.NoError(t, err)
		must.SliceLen(t, 16, key)
		for _, b := range key {
			must.Less(t, 16, b)
		}
		arg, err := idx.FromArgs(v)
		must.NoError(t, err)
		must.Eq(t, key, arg)
		if i > 0 {
			must.Negative(t, bytes.Compare(prev, key), must.Sprintf("%d before %d", values[i-1], v))
		}
		prev = key
	}
}

// Allocs and Evals list in creation order (and by ID within one Raft
// index) without a create index: random IDs come out of the id index in
// another order, so this fails without the sort.
func TestAllocsAndEvals_ListInCreationOrder(t *testing.T) {
	s := testStore(t)
	job := mockBatchJob("ordered")
	must.NoError(t, s.UpsertJob(1, job))
	node := mockNode()
	must.NoError(t, s.UpsertNode(2, node))
	index := uint64(3)
	var firstAlloc *structs.Allocation
	for range 20 {
		e1, e2 := mockEval(job, structs.EvalStatusPending), mockEval(job, structs.EvalStatusPending)
		must.NoError(t, s.UpsertEvals(index, []*structs.Evaluation{e1, e2}))
		a1, a2 := mockAlloc(job, node.ID, e1.ID, structs.AllocClientStatusPending), mockAlloc(job, node.ID, e1.ID, structs.AllocClientStatusPending)
		must.NoError(t, s.UpsertAllocs(index+1, []*structs.Allocation{a1, a2}))
		if firstAlloc == nil {
			firstAlloc = a1
		}
		index += 2
	}
	// A later update keeps an alloc at its creation.
	must.NoError(t, s.UpdateAllocsFromClient(index, []*structs.Allocation{clientUpdate(firstAlloc, structs.AllocClientStatusRunning)}))

	allocs, err := s.Allocs(nil)
	must.NoError(t, err)
	must.SliceLen(t, 40, allocs)
	must.True(t, slices.IsSortedFunc(allocs, func(a, b *structs.Allocation) int {
		return byCreation(a.CreateIndex, a.ID, b.CreateIndex, b.ID)
	}), must.Sprint("allocs out of creation order"))
	evals, err := s.Evals(nil)
	must.NoError(t, err)
	must.SliceLen(t, 40, evals)
	must.True(t, slices.IsSortedFunc(evals, func(a, b *structs.Evaluation) int {
		return byCreation(a.CreateIndex, a.ID, b.CreateIndex, b.ID)
	}), must.Sprint("evals out of creation order"))
	unordered, err := s.AllocsAnyOrder(nil)
	must.NoError(t, err)
	must.SliceLen(t, 40, unordered)
}

// byCreation orders rows by CreateIndex, then ID.
func byCreation(aIndex uint64, aID string, bIndex uint64, bID string) int {
	if c := cmp.Compare(aIndex, bIndex); c != 0 {
		return c
	}
	return strings.Compare(aID, bID)
}

// Every index costs each write of its table a radix tree update; the
// evals table keeps only the ones something reads (namespace listings
// use the job index's namespace prefix).
func TestEvalsSchema_HasOnlyTheIndexesItsReadsUse(t *testing.T) {
	idx := stateSchema().Tables[TableEvals].Indexes
	names := slices.Sorted(maps.Keys(idx))
	must.Eq(t, []string{"id", "job"}, names)
}
