package state

import (
	"reflect"

	"github.com/nomadq/nomadq/structs"
)

// restoreSharer lets the rows of a restore share what repeats between
// them. Decoding gives every row its own copy of every string and
// sub-structure, so a restored store of 100k allocs held each node ID,
// status and resource block 100k times where the live store that wrote the
// snapshot held a handful. Rows in the store are never modified in place
// (an update replaces the row), so sharing is safe.
type restoreSharer struct {
	// strings holds one copy of each repeated string seen so far; only
	// fields whose values repeat across rows go through it, never IDs of
	// the rows themselves.
	strings map[string]string
	// resources holds, per alloc job record, a few distinct
	// AllocatedResources seen: the allocs of one job version mostly have
	// equal resources. Allocs whose resources all differ (dynamic ports)
	// cost a few comparisons each and keep their own.
	resources map[uint64]*resourceCandidates
	// jobRows holds the restored rows of the jobs table, by namespace and
	// ID, for jobVersion.
	jobRows map[structs.NamespacedID]*structs.Job
	// handedOver holds the Jobs already given to the inserter, which
	// jobVersion must not change.
	handedOver map[*structs.Job]bool
}

// sharedResourcesPerJob is how many distinct AllocatedResources of one job
// version a restore keeps to compare with.
const sharedResourcesPerJob = 3

// resourceCandidates are the distinct AllocatedResources kept for one job
// version; when full, the oldest is replaced.
type resourceCandidates struct {
	seen [sharedResourcesPerJob]*structs.AllocatedResources
	next int
}

// share returns a kept value equal to ar, or keeps and returns ar.
func (c *resourceCandidates) share(ar *structs.AllocatedResources) *structs.AllocatedResources {
	for _, kept := range c.seen {
		if kept != nil && reflect.DeepEqual(kept, ar) {
			return kept
		}
	}
	c.seen[c.next] = ar
	c.next = (c.next + 1) % len(c.seen)
	return ar
}

func newRestoreSharer() *restoreSharer {
	return &restoreSharer{
		strings:    make(map[string]string),
		resources:  make(map[uint64]*resourceCandidates),
		jobRows:    make(map[structs.NamespacedID]*structs.Job),
		handedOver: make(map[*structs.Job]bool),
	}
}

// str returns the shared copy of s.
func (r *restoreSharer) str(s string) string {
	if s == "" {
		return ""
	}
	if c, ok := r.strings[s]; ok {
		return c
	}
	r.strings[s] = s
	return s
}

// alloc points a's repeated fields at shared copies. jobRef is the alloc
// record's job reference (0: none); a.Job is already the shared Job.
func (r *restoreSharer) alloc(a *structs.Allocation, jobRef uint64) {
	if j := a.Job; j != nil && a.JobID == j.ID && a.Namespace == j.Namespace {
		a.JobID, a.Namespace = j.ID, j.Namespace
	} else {
		a.JobID, a.Namespace = r.str(a.JobID), r.str(a.Namespace)
	}
	a.NodeID = r.str(a.NodeID)
	a.NodeName = r.str(a.NodeName)
	a.TaskGroup = r.str(a.TaskGroup)
	a.DesiredStatus = r.str(a.DesiredStatus)
	a.DesiredDescription = r.str(a.DesiredDescription)
	a.ClientStatus = r.str(a.ClientStatus)
	a.ClientDescription = r.str(a.ClientDescription)
	a.SigningKeyID = r.str(a.SigningKeyID)
	for _, ts := range a.TaskStates {
		if ts == nil {
			continue
		}
		ts.State = r.str(ts.State)
		for _, e := range ts.Events {
			if e != nil {
				e.Type = r.str(e.Type)
				e.DisplayMessage = r.str(e.DisplayMessage)
			}
		}
	}
	if a.AllocatedResources != nil && jobRef != 0 {
		c := r.resources[jobRef]
		if c == nil {
			c = new(resourceCandidates)
			r.resources[jobRef] = c
		}
		a.AllocatedResources = c.share(a.AllocatedResources)
	}
}

// eval points e's repeated fields at shared copies.
func (r *restoreSharer) eval(e *structs.Evaluation) {
	e.Namespace = r.str(e.Namespace)
	e.Type = r.str(e.Type)
	e.TriggeredBy = r.str(e.TriggeredBy)
	e.JobID = r.str(e.JobID)
	e.NodeID = r.str(e.NodeID)
	e.Status = r.str(e.Status)
	e.StatusDescription = r.str(e.StatusDescription)
}

// jobRow notes a row of the jobs table, handed over to the inserter.
func (r *restoreSharer) jobRow(j *structs.Job) {
	r.jobRows[j.NamespacedID()] = j
	r.handedOver[j] = true
}

// jobVersion lets v, a job version about to be handed over, share the
// spec of its job's row when the row is that same version: the live store
// keeps one Job for both until the job's status changes, and then a
// shallow copy that still shares them, so that a finished batch job would
// otherwise be restored with two copies of its task groups.
func (r *restoreSharer) jobVersion(v *structs.Job) {
	if r.handedOver[v] {
		return
	}
	r.handedOver[v] = true
	row := r.jobRows[v.NamespacedID()]
	if row == nil || row == v || row.Version != v.Version {
		return
	}
	shareEqual(&v.TaskGroups, row.TaskGroups)
	shareEqual(&v.Datacenters, row.Datacenters)
	shareEqual(&v.Constraints, row.Constraints)
	shareEqual(&v.Affinities, row.Affinities)
	shareEqual(&v.Spreads, row.Spreads)
	shareEqual(&v.Periodic, row.Periodic)
	shareEqual(&v.ParameterizedJob, row.ParameterizedJob)
	shareEqual(&v.Payload, row.Payload)
	shareEqual(&v.Reschedule, row.Reschedule)
	shareEqual(&v.Migrate, row.Migrate)
	shareEqual(&v.Meta, row.Meta)
}

// shareEqual points *dst at src when they hold equal values.
func shareEqual[T any](dst *T, src T) {
	if reflect.DeepEqual(*dst, src) {
		*dst = src
	}
}
