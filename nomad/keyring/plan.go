package keyring

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"sync"
	"time"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Presign signs, on the worker that made the plan, the identities of
// the plan's new placements (allocs its snapshot does not hold). Signing
// is the largest single cost of a placement, and the plan applier is one
// goroutine every plan passes through: signing here lets the workers do
// it in parallel, and the applier only signs what is still unsigned
// (SignAlloc skips tasks that have an identity). A failure leaves the
// work to the applier, which reports it.
func (k *Keyring) Presign(snap *state.StateSnapshot, plan *structs.Plan) {
	var signer *Signer
	for _, allocs := range plan.NodeAllocation {
		for _, a := range allocs {
			job := a.Job
			if job == nil {
				job = plan.Job
			}
			if !groupUsesIdentity(job, a.TaskGroup) {
				continue
			}
			if existing, err := snap.AllocByID(nil, a.ID); err != nil || existing != nil {
				continue // an update keeps the identities it has
			}
			if signer == nil {
				var err error
				if signer, err = k.Signer(snap, time.Now()); err != nil {
					return
				}
			}
			// Never write into a map the scheduler may share with a
			// stored alloc.
			a.SignedIdentities = maps.Clone(a.SignedIdentities)
			if err := signer.SignAlloc(job, a); err != nil {
				return
			}
		}
	}
}

// groupUsesIdentity reports whether any task of the job's group can use
// a workload identity; a nil job or an unknown group reports false.
func groupUsesIdentity(job *structs.Job, group string) bool {
	if job == nil {
		return false
	}
	tg := job.LookupTaskGroup(group)
	if tg == nil {
		return false
	}
	for _, task := range tg.Tasks {
		if task.UsesWorkloadIdentity() {
			return true
		}
	}
	return false
}

// Placement is an alloc of a plan on its way to Raft: as the scheduler
// planned it, as it will be written, and as it is stored (nil if new).
type Placement struct {
	Planned, Write, Existing *structs.Allocation
}

// SignPlacements gives every task of the plan's placements that can use
// one a signed identity. A stored alloc keeps the identities it has.
// Signing costs about a millisecond per task and holds up the plan
// applier, so a plan's signatures are made in parallel, one worker per
// CPU; a plan none of whose tasks use an identity needs no root key.
func (k *Keyring) SignPlacements(snap *state.StateSnapshot, plan *structs.Plan, placements []Placement) error {
	var todo []int
	jobs := make([]*structs.Job, len(placements))
	for i, p := range placements {
		jobs[i] = p.Planned.Job
		if jobs[i] == nil {
			jobs[i] = plan.Job
		}
		if jobs[i] == nil {
			return fmt.Errorf("sign identities of alloc %s: the plan carries no job", p.Planned.ID)
		}
		keepIdentities(p.Write, p.Existing)
		if groupUsesIdentity(jobs[i], p.Write.TaskGroup) {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	signer, err := k.Signer(snap, time.Now())
	if err != nil {
		return err
	}
	errs := make([]error, len(placements))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(todo)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = signer.SignAlloc(jobs[i], placements[i].Write)
			}
		})
	}
	for _, i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// keepIdentities gives c, about to be written, its own copy of the
// identities it or the stored alloc has: the map may be the stored
// alloc's, which must never be written into.
func keepIdentities(c, existing *structs.Allocation) {
	ids := maps.Clone(c.SignedIdentities)
	if existing != nil {
		for task, token := range existing.SignedIdentities {
			if _, ok := ids[task]; !ok {
				if ids == nil {
					ids = make(map[string]string, len(existing.SignedIdentities))
				}
				ids[task] = token
			}
		}
		if c.SigningKeyID == "" {
			c.SigningKeyID = existing.SigningKeyID
		}
	}
	c.SignedIdentities = ids
}
