package batchqueue

import "github.com/nomadq/nomadq/structs"

// lines holds the queued rows in release order: one heap for the fifo
// and priority orders, one heap per namespace (in priority order) for
// the fair order, which picks between namespace heads each release.
type lines struct {
	fair bool
	one  *Heap
	byNS map[string]*Heap
	n    int
}

func newLines(order string, entries []*structs.BatchQueueEntry) *lines {
	if order != structs.BatchQueueOrderFair {
		return &lines{one: NewHeap(order, entries), n: len(entries)}
	}
	l := &lines{fair: true, byNS: map[string]*Heap{}}
	split := map[string][]*structs.BatchQueueEntry{}
	for _, e := range entries {
		split[e.Namespace] = append(split[e.Namespace], e)
	}
	for ns, es := range split {
		l.byNS[ns] = NewHeap(structs.BatchQueueOrderPriority, es)
	}
	l.n = len(entries)
	return l
}

// Len is the number of rows held, stale ones included.
func (l *lines) Len() int { return l.n }

// Push adds a row to its line.
func (l *lines) Push(e *structs.BatchQueueEntry) {
	l.n++
	if !l.fair {
		l.one.Push(e)
		return
	}
	h := l.byNS[e.Namespace]
	if h == nil {
		h = NewHeap(structs.BatchQueueOrderPriority, nil)
		l.byNS[e.Namespace] = h
	}
	h.Push(e)
}

// pop removes the next row of h.
func (l *lines) pop(h *Heap) *structs.BatchQueueEntry {
	e := h.Pop()
	if e != nil {
		l.n--
	}
	return e
}
