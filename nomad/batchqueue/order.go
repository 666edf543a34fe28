package batchqueue

import (
	"container/heap"

	"github.com/nomadq/nomadq/structs"
)

// Less reports whether a is released before b under order: fifo by first
// enqueue (Raft index), priority by job priority, higher first, then first
// enqueue. Raft indexes are unique per entry, so the order is total.
func Less(order string, a, b *structs.BatchQueueEntry) bool {
	if order == structs.BatchQueueOrderPriority && a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.EnqueueIndex != b.EnqueueIndex {
		return a.EnqueueIndex < b.EnqueueIndex
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.JobID < b.JobID
}

// Heap is a min-heap of queued entries in release order. Push and Pop
// cost O(log n).
type Heap struct {
	order   string
	entries []*structs.BatchQueueEntry
}

// NewHeap returns a heap of entries ordered by order; it takes ownership
// of the slice and builds the heap in O(n).
func NewHeap(order string, entries []*structs.BatchQueueEntry) *Heap {
	h := &Heap{order: order, entries: entries}
	heap.Init((*heapImpl)(h))
	return h
}

// Len is the number of entries in the heap.
func (h *Heap) Len() int { return len(h.entries) }

// Push adds an entry.
func (h *Heap) Push(e *structs.BatchQueueEntry) { heap.Push((*heapImpl)(h), e) }

// Pop removes and returns the next entry to release, or nil.
func (h *Heap) Pop() *structs.BatchQueueEntry {
	if len(h.entries) == 0 {
		return nil
	}
	return heap.Pop((*heapImpl)(h)).(*structs.BatchQueueEntry)
}

// heapImpl adapts Heap to container/heap without exporting its methods.
type heapImpl Heap

func (h *heapImpl) Len() int           { return len(h.entries) }
func (h *heapImpl) Less(i, j int) bool { return Less(h.order, h.entries[i], h.entries[j]) }
func (h *heapImpl) Swap(i, j int)      { h.entries[i], h.entries[j] = h.entries[j], h.entries[i] }
func (h *heapImpl) Push(x any)         { h.entries = append(h.entries, x.(*structs.BatchQueueEntry)) }
func (h *heapImpl) Pop() any {
	n := len(h.entries) - 1
	e := h.entries[n]
	h.entries[n] = nil
	h.entries = h.entries[:n]
	return e
}
