package fsm

import (
	"github.com/nomadq/nomadq/structs"
)

// applyNodeDrain sets or clears a node's drain strategy as an operator
// asked; a node made eligible again may be where blocked work fits.
func (f *FSM) applyNodeDrain(buf []byte, index uint64) any {
	req, err := decode[structs.NodeUpdateDrainRequest](buf, structs.NodeUpdateDrainRequestType)
	if err != nil {
		return err
	}
	st := f.State()
	if err := st.UpdateNodeDrain(index, req.NodeID, req.DrainStrategy, req.MarkEligible, req.UpdatedAt, req.NodeEvent, req.Meta); err != nil {
		return err
	}
	if req.DrainStrategy == nil && req.MarkEligible {
		f.unblockNode(req.NodeID, index)
	}
	return nil
}

// applyBatchNodeDrain is the drainer's write that ends drains.
func (f *FSM) applyBatchNodeDrain(buf []byte, index uint64) any {
	req, err := decode[structs.BatchNodeUpdateDrainRequest](buf, structs.BatchNodeUpdateDrainRequestType)
	if err != nil {
		return err
	}
	if err := f.State().CompleteNodeDrains(index, req.Updates, req.NodeEvents, req.UpdatedAt); err != nil {
		return err
	}
	for id, u := range req.Updates {
		if u.MarkEligible {
			f.unblockNode(id, index)
		}
	}
	return nil
}

// applyAllocDesiredTransition marks allocations (for migration, by the
// drainer or `nomad alloc stop`) and writes the evals that move them.
func (f *FSM) applyAllocDesiredTransition(buf []byte, index uint64) any {
	req, err := decode[structs.AllocUpdateDesiredTransitionRequest](buf, structs.AllocUpdateDesiredTransitionRequestType)
	if err != nil {
		return err
	}
	return f.alone(func(w *entryWriter) error {
		if err := w.UpdateAllocsDesiredTransitions(index, req.Allocs, req.Evals); err != nil {
			return err
		}
		f.routeEvals(w, req.Evals)
		return nil
	})
}

// unblockNode releases evals blocked on the node's class.
func (f *FSM) unblockNode(id string, index uint64) {
	if n, err := f.State().NodeByID(nil, id); err == nil && n != nil {
		f.blocked.Unblock(n.ComputedClass, index)
	}
}
