package batchqueue

import (
	"cmp"
	"iter"
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// readControls reads the operators' holds and tops again when the
// control table moved (or the queue was rebuilt), and watches it. It
// reports whether they changed.
func (r *runner) readControls(ws memdb.WatchSet, force bool) (bool, error) {
	idx, err := r.st.TableIndexWatch(ws, state.TableBatchQueueControls)
	if err != nil {
		return false, err
	}
	if !force && idx == r.controlsIdx && r.controls.byKey != nil {
		return false, nil
	}
	controls, err := r.st.BatchQueueControls(nil)
	if err != nil {
		return false, err
	}
	r.controlsIdx, r.controls = idx, NewControls(controls)
	return true, nil
}

// toppedByNamespace groups the topped, not held, controls by namespace,
// newest top first.
func toppedByNamespace(controls map[string]*structs.BatchQueueControl) map[string][]*structs.BatchQueueControl {
	out := map[string][]*structs.BatchQueueControl{}
	for _, c := range controls {
		if c.Top > 0 && !c.Held {
			out[c.Namespace] = append(out[c.Namespace], c)
		}
	}
	for _, cs := range out {
		slices.SortFunc(cs, func(a, b *structs.BatchQueueControl) int { return cmp.Compare(b.Top, a.Top) })
	}
	return out
}

// Controls are the operators' holds and tops of queued entries, as the
// line and the listing alike apply them (see Apply). A control applies
// to the entry it names only while that entry keeps the EnqueueIndex the
// control was made on, so a job stopped and submitted again starts
// clean. The zero value holds and tops nothing.
type Controls struct {
	byKey map[string]*structs.BatchQueueControl
	// topped are the topped, not held, controls by namespace, newest
	// top first.
	topped map[string][]*structs.BatchQueueControl
}

// NewControls indexes control rows keyed by namespace and job ID joined
// by a NUL byte, as the state store returns them.
func NewControls(rows map[string]*structs.BatchQueueControl) Controls {
	return Controls{byKey: rows, topped: toppedByNamespace(rows)}
}

// Len is the number of controls that hold or top an entry.
func (c Controls) Len() int { return len(c.byKey) }

// Held reports whether an operator holds e.
func (c Controls) Held(e *structs.BatchQueueEntry) bool {
	ctl := c.byKey[key(e.Namespace, e.JobID)]
	return ctl != nil && ctl.Held && ctl.EnqueueIndex == e.EnqueueIndex
}

// Apply is the one rule by which holds and tops order the queued line:
// the runner's line releases in the order it yields and the listing
// shows that order, so `nomad queue jobs` cannot disagree with what is
// released. line yields the queued entries in release order without
// controls (Less, or one namespace's line for the fair order). Apply
// yields them in that order, each with whether it is held, and ahead of
// the first entry of a namespace (held or not) the namespace's topped
// entries, newest top first; a topped entry is yielded once, ahead, and
// passed over at its own place. A held entry keeps its place: the line
// skips it, the listing shows it there. queued returns the entry a top
// names as it is now, nil when it is gone; an entry released or enqueued
// anew since its top is passed over.
//
// Apply pulls line only as far as its consumer reads, so the line's
// rounds stay O(k log n) for k entries considered.
func (c Controls) Apply(line iter.Seq[*structs.BatchQueueEntry], queued func(namespace, jobID string) *structs.BatchQueueEntry) iter.Seq2[*structs.BatchQueueEntry, bool] {
	return func(yield func(*structs.BatchQueueEntry, bool) bool) {
		if len(c.byKey) == 0 {
			for e := range line {
				if !yield(e, false) {
					return
				}
			}
			return
		}
		ahead := map[string]bool{}   // topped entries yielded ahead of their place, by key
		reached := map[string]bool{} // namespaces whose tops were yielded
		for e := range line {
			k := key(e.Namespace, e.JobID)
			if ahead[k] {
				continue
			}
			if !reached[e.Namespace] {
				reached[e.Namespace] = true
				for _, ctl := range c.topped[e.Namespace] {
					tk := key(ctl.Namespace, ctl.JobID)
					ahead[tk] = true
					t := queued(ctl.Namespace, ctl.JobID)
					if t == nil || t.Released() || t.EnqueueIndex != ctl.EnqueueIndex {
						continue
					}
					if !yield(t, false) {
						return
					}
				}
				if ahead[k] {
					continue // e is a top of its namespace: it went with them
				}
			}
			if !yield(e, c.Held(e)) {
				return
			}
		}
	}
}

// arrange is the listing's order of queued entries sorted in release
// order: Apply over them, held entries in their place.
func arrange(sorted []*structs.BatchQueueEntry, c Controls) []*structs.BatchQueueEntry {
	if c.Len() == 0 {
		return sorted
	}
	byKey := make(map[string]*structs.BatchQueueEntry, len(sorted))
	for _, e := range sorted {
		byKey[key(e.Namespace, e.JobID)] = e
	}
	out := make([]*structs.BatchQueueEntry, 0, len(sorted))
	for e := range c.Apply(slices.Values(sorted), func(ns, id string) *structs.BatchQueueEntry { return byKey[key(ns, id)] }) {
		out = append(out, e)
	}
	return out
}
