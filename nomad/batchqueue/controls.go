package batchqueue

import (
	"cmp"
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
	if !force && idx == r.controlsIdx && r.controls != nil {
		return false, nil
	}
	controls, err := r.st.BatchQueueControls(nil)
	if err != nil {
		return false, err
	}
	r.controlsIdx, r.controls = idx, controls
	r.topped = toppedByNamespace(controls)
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

// applyControls puts a listing's queued entries, in release order, in
// the order the line yields them: before the first entry of a namespace
// (topped or not), that namespace's topped entries, newest top first.
// Held entries keep their place.
func applyControls(queued []*structs.BatchQueueEntry, controls map[string]*structs.BatchQueueControl) []*structs.BatchQueueEntry {
	topped := toppedByNamespace(controls)
	if len(topped) == 0 {
		return queued
	}
	byKey := map[string]*structs.BatchQueueEntry{}
	for _, e := range queued {
		if c := controls[key(e.Namespace, e.JobID)]; c != nil && c.Top > 0 && !c.Held {
			byKey[key(e.Namespace, e.JobID)] = e
		}
	}
	out := make([]*structs.BatchQueueEntry, 0, len(queued))
	seen := map[string]bool{}
	for _, e := range queued {
		if !seen[e.Namespace] {
			seen[e.Namespace] = true
			for _, c := range topped[e.Namespace] {
				if t := byKey[key(c.Namespace, c.JobID)]; t != nil {
					out = append(out, t)
				}
			}
		}
		if byKey[key(e.Namespace, e.JobID)] == nil {
			out = append(out, e)
		}
	}
	return out
}
