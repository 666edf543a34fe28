package nomad

import (
	"github.com/nomadq/nomadq/structs"
)

// System is the RPC endpoint for cluster-wide maintenance.
type System struct {
	srv *Server
}

// GarbageCollect starts a forced garbage collection: a force-gc core eval
// that collects every terminal eval, alloc, dead job and down node at once,
// whatever their age. It returns once the eval is written, not when the
// collection is done.
func (s *System) GarbageCollect(args *structs.GenericRequest, reply *structs.GenericResponse) error {
	if done, err := s.srv.forward("System.GarbageCollect", structs.WriteRequest{Region: args.Region}, args, reply); done {
		return err
	}
	index, err := s.srv.createCoreEvalIndex(structs.CoreJobForceGC)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ReconcileJobSummaries recomputes every job summary from the allocs and
// child jobs in state, through Raft so that every server does the same.
func (s *System) ReconcileJobSummaries(args *structs.GenericRequest, reply *structs.GenericResponse) error {
	if done, err := s.srv.forward("System.ReconcileJobSummaries", structs.WriteRequest{Region: args.Region}, args, reply); done {
		return err
	}
	_, index, err := s.srv.raftApply(structs.ReconcileJobSummariesRequestType, &structs.ReconcileJobSummariesRequest{WriteRequest: structs.WriteRequest{Region: args.Region}})
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}
