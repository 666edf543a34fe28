package nomad

import (
	"context"
	"time"

	"github.com/nomadq/nomadq/nomad/nodedrain"
	"github.com/nomadq/nomadq/structs"
)

// raftDrainWriter commits the drainer's writes through Raft.
type raftDrainWriter struct{ srv *Server }

func (w raftDrainWriter) MarkMigrate(req *structs.AllocUpdateDesiredTransitionRequest) error {
	_, _, err := w.srv.raftApply(structs.AllocUpdateDesiredTransitionRequestType, req)
	return err
}

func (w raftDrainWriter) CompleteDrains(req *structs.BatchNodeUpdateDrainRequest) error {
	_, _, err := w.srv.raftApply(structs.BatchNodeUpdateDrainRequestType, req)
	return err
}

// runNodeDrainer is the leader loop that drains nodes.
func (s *Server) runNodeDrainer(ctx context.Context) {
	nodedrain.New(s.logger.Named("drainer"), s.State, raftDrainWriter{s}, time.Now).Run(ctx)
}
