// Package orderedheap is the priority heap the leader's in-memory queues
// (the eval broker, the plan queue) keep their items in. It orders items
// by a less function and nothing else: it must not know what it holds.
package orderedheap

import "container/heap"

// Heap is a min-heap of T ordered by the less function it was made with.
// Push and Pop cost O(log n).
type Heap[T any] struct {
	items []T
	less  func(a, b T) bool
}

// New returns an empty heap that keeps the item for which less holds
// against every other on top.
func New[T any](less func(a, b T) bool) *Heap[T] {
	return &Heap[T]{less: less}
}

// Len is the number of items in the heap.
func (h *Heap[T]) Len() int { return len(h.items) }

// Push adds an item.
func (h *Heap[T]) Push(x T) { heap.Push((*impl[T])(h), x) }

// Pop removes and returns the top item; the heap must not be empty.
func (h *Heap[T]) Pop() T { return heap.Pop((*impl[T])(h)).(T) }

// Peek returns the top item without removing it; the heap must not be
// empty.
func (h *Heap[T]) Peek() T { return h.items[0] }

// Items returns the held items in no particular order; the slice is the
// heap's own and must not be modified.
func (h *Heap[T]) Items() []T { return h.items }

// impl adapts Heap to container/heap without exporting its methods.
type impl[T any] Heap[T]

func (h *impl[T]) Len() int           { return len(h.items) }
func (h *impl[T]) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *impl[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *impl[T]) Push(x any)         { h.items = append(h.items, x.(T)) }

func (h *impl[T]) Pop() any {
	n := len(h.items) - 1
	x := h.items[n]
	var zero T
	h.items[n] = zero
	h.items = h.items[:n]
	return x
}
