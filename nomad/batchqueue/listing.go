package batchqueue

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/nomadq/nomadq/structs"
)

func sortByRelease(entries []*structs.BatchQueueListEntry) {
	slices.SortFunc(entries, func(a, b *structs.BatchQueueListEntry) int {
		if c := cmp.Compare(a.ReleaseTime, b.ReleaseTime); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return cmp.Compare(a.JobID, b.JobID)
	})
}

func listEntry(e *structs.BatchQueueEntry, status string, r reason) *structs.BatchQueueListEntry {
	le := &structs.BatchQueueListEntry{
		Namespace:   e.Namespace,
		JobID:       e.JobID,
		EvalID:      e.EvalID,
		Priority:    e.Priority,
		Status:      status,
		EnqueueTime: e.EnqueueTime,
		ReleaseTime: e.ReleaseTime(),
	}
	r.set(le)
	return le
}

// List returns every entry: queued ones first in release order with their
// 1-based Position, then the released ones (Position 0) in release order.
// The queued line is read from the state store and sorted here, so its
// cost falls on the reader, not on the queue's rounds.
func (q *Queue) List() []*structs.BatchQueueListEntry {
	entries, _ := q.ListWithTokens()
	return entries
}

// ListWithTokens is List with each entry's page token: a string that
// sorts like the listing and stays put as the queue moves, so a client
// paging through a queue that releases or loses entries between pages
// skips none (one released in between moves to the released part and
// can show twice). A queued entry's token is its sort key,
// a released one's its release time; names are hex-encoded so that the
// separators sort below every name byte.
func (q *Queue) ListWithTokens() ([]*structs.BatchQueueListEntry, []string) {
	v := q.readerView()
	rel := v.releasedEntries()
	out := make([]*structs.BatchQueueListEntry, 0, len(rel))
	if v.store == nil || !v.settings.Enabled {
		return out, nil
	}
	rows, err := v.store.BatchQueueEntries(nil)
	if err != nil {
		q.cfg.Logger.Error("batch queue listing failed", "error", err)
		return out, nil
	}
	known := make(map[string]*structs.BatchQueueListEntry, len(rel))
	for _, e := range rel {
		known[key(e.Namespace, e.JobID)] = e
	}
	var queued []*structs.BatchQueueEntry
	var released []*structs.BatchQueueListEntry
	for _, e := range rows {
		switch le := known[key(e.Namespace, e.JobID)]; {
		case !e.Released():
			queued = append(queued, e)
		case le != nil:
			c := *le
			released = append(released, &c)
		default:
			// Released by a commit the queue has not read back yet.
			released = append(released, listEntry(e, structs.BatchQueueStatusPlacing, reasonNotJudged))
		}
	}
	demand := storeDemand(v)
	cluster, shares := q.readCluster(v)
	fair := v.settings.Order == structs.BatchQueueOrderFair
	mf := v.settings.Order == structs.BatchQueueOrderMultifactor
	var factors []structs.BatchQueueFactors
	if fair {
		queued = projectFair(queued, cluster, shares, v.controls, demand)
	} else if mf {
		queued, factors = q.rankMultifactor(v, queued, cluster, shares, demand)
	} else {
		slices.SortFunc(queued, func(a, b *structs.BatchQueueEntry) int {
			if Less(v.settings.Order, a, b) {
				return -1
			}
			return 1
		})
		queued = arrange(queued, v.controls)
	}
	starts := q.estimate(v, cluster, queued, demand)
	tokens := make([]string, 0, len(queued)+len(released))
	nsSeen := map[string]bool{}
	for i, e := range queued {
		le := listEntry(e, structs.BatchQueueStatusQueued, queuedReason(v, e, i+1))
		le.Position = i + 1
		if !starts[i].IsZero() && !held(v, e) {
			le.EstimatedStart = starts[i].UnixNano()
		}
		if mf {
			f := factors[i]
			le.Factors, le.EffectivePriority = &f, f.Sum()
		}
		if le.Reason == ReasonPriority && fair && !nsSeen[e.Namespace] && i > 0 {
			reason{ReasonFairShare, detailFairShare}.set(le)
		}
		nsSeen[e.Namespace] = true
		out = append(out, le)
		switch {
		case fair || mf:
			// The projection and the ranking move with usage and time:
			// the position is the token.
			tokens = append(tokens, fmt.Sprintf("q-%020d-%x-%x", i+1, e.Namespace, e.JobID))
		default:
			prio := 0
			if v.settings.Order == structs.BatchQueueOrderPriority {
				prio = math.MaxInt32 - e.Priority
			}
			tokens = append(tokens, fmt.Sprintf("q-%010d-%020d-%x-%x", prio, e.EnqueueIndex, e.Namespace, e.JobID))
		}
	}
	sortByRelease(released)
	for _, e := range released {
		tokens = append(tokens, fmt.Sprintf("r-%020d-%x-%x", e.ReleaseTime, e.Namespace, e.JobID))
	}
	return append(out, released...), tokens
}

// estimate is the expected start of each queued entry, in release
// order, behind the reserved workload if there is one.
func (q *Queue) estimate(v view, c Cluster, queued []*structs.BatchQueueEntry, demand func(*structs.BatchQueueEntry) Demand) []time.Time {
	now := v.at
	if now.IsZero() {
		now = time.Now()
	}
	var skip *structs.BatchQueueEntry
	if v.reservation != nil {
		skip = v.reservation.Entry
	}
	c = Pending(c, v.pending, skip, now)
	demands := make([]Demand, 0, len(queued)+1)
	if r := v.reservation; r != nil {
		d := demand(r.Entry)
		demands = append(demands, Demand{Ask: r.Need, MaxRun: d.MaxRun})
	}
	for _, e := range queued {
		if held(v, e) {
			demands = append(demands, Demand{}) // it does not start: it takes no room
			continue
		}
		demands = append(demands, demand(e))
	}
	starts := Estimate(c, now, demands)
	if v.reservation != nil {
		starts = starts[1:]
	}
	return starts
}

// Lookup returns one job's entry, or nil when the job is not in the
// queue. A queued job's Position is the number of queued entries that
// sort before it, plus one; its estimate and reason come from the whole
// listing, so a queued job costs what a listing costs.
func (q *Queue) Lookup(namespace, jobID string) *structs.BatchQueueListEntry {
	v := q.readerView()
	if v.store == nil || !v.settings.Enabled {
		return nil
	}
	for _, e := range v.releasedEntries() {
		if e.Namespace == namespace && e.JobID == jobID {
			c := *e
			return &c
		}
	}
	row, err := v.store.BatchQueueEntryByJob(nil, namespace, jobID)
	if err != nil || row == nil {
		return nil
	}
	if row.Released() {
		return listEntry(row, structs.BatchQueueStatusPlacing, reasonNotJudged)
	}
	if v.settings.Order == structs.BatchQueueOrderFair || v.settings.Order == structs.BatchQueueOrderMultifactor || v.controls.Len() > 0 {
		// The projection, the ranking and tops need every entry's place.
		for _, le := range q.List() {
			if le.Namespace == namespace && le.JobID == jobID {
				return le
			}
		}
		return nil
	}
	// One pass collects the entries ahead; only they are sorted and
	// read for the estimate, so the head of a long line costs one pass.
	var ahead []*structs.BatchQueueEntry
	err = v.store.BatchQueueEach(func(e *structs.BatchQueueEntry) {
		if !e.Released() && Less(v.settings.Order, e, row) {
			ahead = append(ahead, e)
		}
	})
	if err != nil {
		q.cfg.Logger.Error("batch queue lookup failed", "error", err)
		return nil
	}
	slices.SortFunc(ahead, func(a, b *structs.BatchQueueEntry) int {
		if Less(v.settings.Order, a, b) {
			return -1
		}
		return 1
	})
	le := listEntry(row, structs.BatchQueueStatusQueued, queuedReason(v, row, len(ahead)+1))
	le.Position = len(ahead) + 1
	cluster, _ := q.readCluster(v)
	starts := q.estimate(v, cluster, append(ahead, row), storeDemand(v))
	if at := starts[len(starts)-1]; !at.IsZero() {
		le.EstimatedStart = at.UnixNano()
	}
	return le
}

// storeDemand reads a queued entry's demand from the view's store.
func storeDemand(v view) func(*structs.BatchQueueEntry) Demand {
	return func(e *structs.BatchQueueEntry) Demand {
		job, err := v.store.JobByID(nil, e.Namespace, e.JobID)
		if err != nil {
			return Demand{}
		}
		return DemandOf(job)
	}
}

// readCluster reads the cluster for the listing's estimates and the fair
// projection.
func (q *Queue) readCluster(v view) (Cluster, map[string]structs.BatchQueueShare) {
	snap, err := v.store.Snapshot()
	if err != nil {
		return Cluster{}, nil
	}
	c, shares, err := ReadCluster(snap)
	if err != nil {
		q.cfg.Logger.Error("batch queue listing: reading the cluster failed", "error", err)
	}
	return c, shares
}

// Status returns the settings, the depth by status and the placing
// workloads.
func (q *Queue) Status() structs.BatchQueueStatus {
	v := q.current()
	s := structs.BatchQueueStatus{
		Config: v.settings,
		Depth: map[string]int{structs.BatchQueueStatusQueued: 0, structs.BatchQueueStatusPlacing: 0,
			structs.BatchQueueStatusStalled: 0, structs.BatchQueueStatusConstrained: 0},
		Placing: []*structs.BatchQueueListEntry{},
	}
	if v.store != nil && v.settings.Enabled {
		if stats, err := v.store.BatchQueueStats(nil); err == nil {
			s.Depth[structs.BatchQueueStatusQueued] = stats.Queued
		}
	}
	for _, e := range v.releasedEntries() {
		s.Depth[e.Status]++
		if e.Status == structs.BatchQueueStatusPlacing {
			c := *e
			s.Placing = append(s.Placing, &c)
		}
	}
	return s
}

// held reports whether an operator holds the queued entry.
func held(v view, e *structs.BatchQueueEntry) bool { return v.controls.Held(e) }

// buildReleased lists released workloads not yet placed as the API shows
// them, in release order: a status and reason from each verdict, and the
// reservation's reason and estimated start on the job it holds room for.
func buildReleased(pending []Workload, res *Reservation) []*structs.BatchQueueListEntry {
	out := make([]*structs.BatchQueueListEntry, 0, len(pending))
	for _, w := range pending {
		status := w.Verdict.Status
		if status == "" {
			status = structs.BatchQueueStatusPlacing // released, not judged yet
		}
		le := listEntry(w.Entry, status, releasedReason(w, res))
		if res != nil && res.Entry.Namespace == w.Entry.Namespace && res.Entry.JobID == w.Entry.JobID && !res.Start.IsZero() {
			le.EstimatedStart = res.Start.UnixNano()
		}
		out = append(out, le)
	}
	sortByRelease(out)
	return out
}
