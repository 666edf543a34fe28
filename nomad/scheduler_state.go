package nomad

import (
	"github.com/nomadq/nomadq/scheduler"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// snapshotState adapts a state snapshot to the scheduler's read interface.
type snapshotState struct {
	snap *state.StateSnapshot
}

var _ scheduler.State = (*snapshotState)(nil)

func (s *snapshotState) JobByID(ns, id string) (*structs.Job, error) {
	return s.snap.JobByID(nil, ns, id)
}
func (s *snapshotState) NodeByID(id string) (*structs.Node, error) { return s.snap.NodeByID(nil, id) }
func (s *snapshotState) Nodes() ([]*structs.Node, error)           { return s.snap.Nodes(nil) }

// NodeSet serves the scheduler the store's shared node list.
func (s *snapshotState) NodeSet() ([]*structs.Node, map[string]*structs.Node, error) {
	return s.snap.NodeSet()
}

// ReadyNodeCounts serves the scheduler the store's shared counts of ready
// nodes.
func (s *snapshotState) ReadyNodeCounts() (map[string]map[string]int, error) {
	return s.snap.ReadyNodeCounts()
}
func (s *snapshotState) AllocsByJob(ns, jobID string) ([]*structs.Allocation, error) {
	return s.snap.AllocsByJob(nil, ns, jobID, true)
}
func (s *snapshotState) AllocsByNode(nodeID string) ([]*structs.Allocation, error) {
	return s.snap.AllocsByNodeTerminal(nil, nodeID, false)
}
func (s *snapshotState) EvalByID(id string) (*structs.Evaluation, error) {
	return s.snap.EvalByID(nil, id)
}
func (s *snapshotState) LatestIndex() (uint64, error) { return s.snap.LatestIndex() }
func (s *snapshotState) SchedulerConfig() (*structs.SchedulerConfiguration, error) {
	_, cfg, err := s.snap.SchedulerConfig()
	if cfg == nil && err == nil {
		cfg = structs.DefaultSchedulerConfiguration()
	}
	return cfg, err
}
