package nomad

import (
	"time"

	"github.com/nomadq/nomadq/structs"
)

// restoreVariableLocks starts a lease for every held lock; the leader
// calls it when it takes over.
func (s *Server) restoreVariableLocks() error {
	s.varLocks.SetEnabled(true)
	vars, err := s.State().VariablesByPrefix(nil, "*", "")
	if err != nil {
		return err
	}
	for _, v := range vars {
		if v.Lock != nil {
			s.varLocks.Track(structs.NamespacedID{Namespace: v.Namespace, ID: v.Path}, v.Lock)
		}
	}
	return nil
}

// expireVariableLock releases a lock whose lease ran out, unless its
// holder released it or the variable went away first (the FSM then
// answers with a conflict, which changes nothing).
func (s *Server) expireVariableLock(key structs.NamespacedID, lockID string) {
	req := &structs.VarApplyStateRequest{
		Op: structs.VarOpLockRelease,
		Var: &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{
			Namespace: key.Namespace, Path: key.ID, ModifyTime: time.Now().UnixNano(),
			Lock: &structs.VariableLock{ID: lockID},
		}},
	}
	if _, _, err := s.raftApply(structs.VarApplyStateRequestType, req); err != nil {
		s.logger.Warn("failed to release an expired variable lock", "namespace", key.Namespace, "path", key.ID, "error", err)
		return
	}
	s.logger.Debug("released an expired variable lock", "namespace", key.Namespace, "path", key.ID)
}
