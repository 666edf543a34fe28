package batchqueue

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestLess(t *testing.T) {
	e := func(ns, id string, prio int, index uint64) *structs.BatchQueueEntry {
		return &structs.BatchQueueEntry{Namespace: ns, JobID: id, Priority: prio, EnqueueIndex: index}
	}
	cases := []struct {
		name  string
		order string
		a, b  *structs.BatchQueueEntry
		want  bool
	}{
		{"fifo: earlier first", structs.BatchQueueOrderFIFO, e("default", "x", 10, 1), e("default", "y", 90, 2), true},
		{"fifo: later second", structs.BatchQueueOrderFIFO, e("default", "y", 90, 2), e("default", "x", 10, 1), false},
		{"priority: higher first", structs.BatchQueueOrderPriority, e("default", "y", 90, 2), e("default", "x", 10, 1), true},
		{"priority: lower second", structs.BatchQueueOrderPriority, e("default", "x", 10, 1), e("default", "y", 90, 2), false},
		{"priority: tie by first enqueue", structs.BatchQueueOrderPriority, e("default", "x", 50, 1), e("default", "y", 50, 2), true},
		{"priority: tie, later second", structs.BatchQueueOrderPriority, e("default", "y", 50, 2), e("default", "x", 50, 1), false},
		// Rows read back from different stores can share an index; the
		// names keep the order total.
		{"same index: by namespace", structs.BatchQueueOrderFIFO, e("a", "z", 50, 3), e("b", "a", 50, 3), true},
		{"same index: by job", structs.BatchQueueOrderFIFO, e("default", "a", 50, 3), e("default", "b", 50, 3), true},
		{"irreflexive", structs.BatchQueueOrderFIFO, e("default", "a", 50, 3), e("default", "a", 50, 3), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, Less(tc.order, tc.a, tc.b))
		})
	}
}

// The heap pops in Less order whatever the push order.
func TestHeap_PopsInOrder(t *testing.T) {
	entries := []*structs.BatchQueueEntry{
		{JobID: "c", Priority: 10, EnqueueIndex: 3},
		{JobID: "a", Priority: 90, EnqueueIndex: 5},
		{JobID: "b", Priority: 50, EnqueueIndex: 1},
		{JobID: "d", Priority: 90, EnqueueIndex: 2},
	}
	cases := []struct {
		order string
		want  []string
	}{
		{structs.BatchQueueOrderFIFO, []string{"b", "d", "c", "a"}},
		{structs.BatchQueueOrderPriority, []string{"d", "a", "b", "c"}},
	}
	for _, tc := range cases {
		t.Run(tc.order, func(t *testing.T) {
			h := NewHeap(tc.order, append([]*structs.BatchQueueEntry(nil), entries[:2]...))
			for _, e := range entries[2:] {
				h.Push(e)
			}
			var got []string
			for h.Len() > 0 {
				got = append(got, h.Pop().JobID)
			}
			must.Eq(t, tc.want, got)
			must.Nil(t, h.Pop())
		})
	}
}
