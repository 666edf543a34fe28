package nomad

import "github.com/nomadq/nomadq/structs"

// maxAllocUpdateBatch caps the allocs one Raft entry of client updates
// carries.
const maxAllocUpdateBatch = 1024

// applyAllocUpdates writes clients' alloc updates, and the evals they
// call for, as one entry; s.allocUpdates group-commits them.
func (s *Server) applyAllocUpdates(pieces []*structs.AllocUpdateRequest) (uint64, error) {
	req := pieces[0]
	if len(pieces) > 1 {
		req = &structs.AllocUpdateRequest{}
		for _, p := range pieces {
			req.Alloc = append(req.Alloc, p.Alloc...)
			req.Evals = append(req.Evals, p.Evals...)
		}
	}
	_, index, err := s.raftApply(structs.AllocClientUpdateRequestType, req)
	return index, err
}
