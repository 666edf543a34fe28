package batchqueue

import (
	"fmt"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// Reason codes of queue entries, as Slurm names them. An entry's Reason is
// exactly one of them, so clients can switch on it; its ReasonDetail says
// the same in words.
const (
	ReasonPriority       = "Priority"       // others are ahead, or every slot is busy
	ReasonLine           = "Line"           // fifo: its place in the line
	ReasonFairShare      = "FairShare"      // another namespace holds less of its share
	ReasonNamespaceLimit = "NamespaceLimit" // the namespace is at its cap
	ReasonResources      = "Resources"      // waiting for capacity a reservation holds
	ReasonHeld           = "Held"           // an operator holds it: it keeps its place and is skipped
	ReasonPlacing        = "Placing"        // released: the scheduler is placing it
	ReasonBackfill       = "Backfill"       // released ahead of a reservation
	ReasonStalled        = "Stalled"        // released, and no placement came in time
	ReasonConstrained    = "Constrained"    // released, and no node can ever run it
)

// Details of the reasons whose words do not depend on the entry.
const (
	detailNotJudged      = "released to the scheduler"
	detailFairShare      = "another namespace is further below its fair share and goes first"
	detailNamespaceLimit = "its namespace is at its batch_queue_max_running or batch_queue_max_placing cap"
	detailHeld           = `held by an operator; "nomad queue release" lets it go`
)

// reason is an entry's Reason code and its ReasonDetail.
type reason struct{ code, detail string }

func (r reason) set(le *structs.BatchQueueListEntry) { le.Reason, le.ReasonDetail = r.code, r.detail }

// reasonNotJudged is the reason of a released workload the queue has not
// judged yet.
var reasonNotJudged = reason{ReasonPlacing, detailNotJudged}

// queuedReason is why a queued entry at position pos waits, outside the
// fair order (which adds FairShare). In fifo order nothing but the line
// holds it back, so the reason is its place there; Priority is for the
// priority and multifactor orders, where higher priorities go first.
func queuedReason(v view, e *structs.BatchQueueEntry, pos int) reason {
	switch {
	case held(v, e):
		return reason{ReasonHeld, detailHeld}
	case v.limited[e.Namespace]:
		return reason{ReasonNamespaceLimit, detailNamespaceLimit}
	case v.reservation != nil:
		return reason{ReasonResources, fmt.Sprintf("waiting for capacity that job %q, ahead of it, has reserved",
			v.reservation.Entry.JobID)}
	case v.settings.Order == structs.BatchQueueOrderFIFO:
		return reason{ReasonLine, lineDetail(pos)}
	}
	return reason{ReasonPriority, priorityDetail(v.settings.Order, pos)}
}

// lineDetail is a fifo entry's place in the line in words.
func lineDetail(pos int) string {
	switch pos {
	case 1:
		return "first in line, waiting for a free placement slot"
	case 2:
		return "1 job ahead in the line"
	}
	return fmt.Sprintf("%d jobs ahead in the line", pos-1)
}

// priorityDetail says what is ahead of an entry at position pos in the
// priority, fair or multifactor order.
func priorityDetail(order string, pos int) string {
	if pos == 1 {
		return "first in line, waiting for a free placement slot"
	}
	ahead := "1 job"
	if pos > 2 {
		ahead = fmt.Sprintf("%d jobs", pos-1)
	}
	switch order {
	case structs.BatchQueueOrderMultifactor:
		return ahead + " of higher effective priority ahead of it"
	case structs.BatchQueueOrderFair:
		return ahead + " ahead of it in the fair-share order"
	}
	return ahead + " of higher priority or submitted earlier ahead of it"
}

// releasedReason is why a released workload is where it is: the
// reservation's holder waits for capacity, the others carry their
// verdict.
func releasedReason(w Workload, res *Reservation) reason {
	if res != nil && res.Entry.Namespace == w.Entry.Namespace && res.Entry.JobID == w.Entry.JobID {
		return reason{ReasonResources, res.Why}
	}
	switch w.Verdict.Status {
	case structs.BatchQueueStatusStalled:
		return reason{ReasonStalled, w.Verdict.Reason}
	case structs.BatchQueueStatusConstrained:
		return reason{ReasonConstrained, w.Verdict.Reason}
	}
	return placingReason(w, res)
}

// placingReason says what a placing workload waits for: the scheduler,
// until its stall deadline; a workload released after the one holding a
// reservation was backfilled ahead of it.
func placingReason(w Workload, res *Reservation) reason {
	if w.Verdict.Status == "" {
		return reasonNotJudged
	}
	why := "the scheduler is placing its allocations"
	if !w.Verdict.Deadline.IsZero() {
		why += ", stalled if none is placed by " + w.Verdict.Deadline.UTC().Format(time.RFC3339)
	}
	if res != nil && res.Entry.ReleaseTime() < w.Entry.ReleaseTime() &&
		(res.Entry.Namespace != w.Entry.Namespace || res.Entry.JobID != w.Entry.JobID) {
		return reason{ReasonBackfill, fmt.Sprintf("released ahead of job %q, which holds a reservation; %s", res.Entry.JobID, why)}
	}
	return reason{ReasonPlacing, why}
}
