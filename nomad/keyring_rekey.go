package nomad

import (
	"context"
	"fmt"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/structs"
)

// rekeyBatchSize bounds how many variables one pass of rekeyVariables
// re-encrypts before it reads the state again.
const rekeyBatchSize = 64

// rekeyVariables is the leader loop of full rotation, Nomad's
// variables-rekey core job: every variable sealed with a rekeying key is
// re-encrypted with the active key, one Raft write each (a compare and
// set, so that a write by a user in between wins and is not undone), in
// batches of rekeyBatchSize; a rekeying key that seals no variable any
// more becomes inactive. The key states are in Raft, so a new leader
// carries on where the old one stopped.
func (s *Server) rekeyVariables(ctx context.Context) {
	for ctx.Err() == nil {
		st := s.State()
		ws := memdb.NewWatchSet()
		ws.Add(st.AbandonCh())
		keys, err := st.RootKeys(ws)
		if err == nil {
			var worked bool
			worked, err = s.rekeyPass(ctx, keys)
			if err == nil && worked {
				continue
			}
		}
		wctx, cancel := ctx, context.CancelFunc(func() {})
		if err != nil {
			s.logger.Error("keyring: rekey variables", "error", err)
			wctx, cancel = context.WithTimeout(ctx, time.Second) // retry
		}
		_ = ws.WatchCtx(wctx)
		cancel()
	}
}

// rekeyPass does one batch of the work of the first rekeying key and
// reports whether it did anything.
func (s *Server) rekeyPass(ctx context.Context, keys []*structs.RootKey) (bool, error) {
	for _, key := range keys {
		if key.State != structs.RootKeyStateRekeying {
			continue
		}
		st := s.State()
		vars, err := st.VariablesByKeyID(nil, key.KeyID)
		if err != nil {
			return false, err
		}
		if len(vars) == 0 {
			done := key.Copy()
			done.State = structs.RootKeyStateInactive
			if _, _, err := s.raftApply(structs.RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{RootKey: done}); err != nil {
				return false, fmt.Errorf("make root key %s inactive: %w", key.KeyID, err)
			}
			s.logger.Info("keyring: variables rekeyed, root key is now inactive", "key_id", key.KeyID)
			return true, nil
		}
		if len(vars) > rekeyBatchSize {
			vars = vars[:rekeyBatchSize]
		}
		for _, v := range vars {
			if ctx.Err() != nil {
				return false, nil
			}
			if err := s.rekeyVariable(v); err != nil {
				return false, err
			}
		}
		return true, nil
	}
	return false, nil
}

// rekeyVariable seals v's items again with the active key. A conflict (the
// variable changed or went since it was read) is not an error: the next
// pass reads it again, and a write by a user already used the active key.
func (s *Server) rekeyVariable(v *structs.VariableEncrypted) error {
	st := s.State()
	dec, err := keyring.DecryptVariable(st, v)
	if err != nil {
		return err
	}
	enc, err := keyring.EncryptVariable(st, dec)
	if err != nil {
		return err
	}
	if enc.KeyID == v.KeyID {
		return fmt.Errorf("variable %s@%s: the active key is the rekeying key %s", v.Path, v.Namespace, v.KeyID)
	}
	// The CAS is on the stored ModifyIndex; the lock, if any, is carried
	// so that a locked variable is not refused to its own rekey and keeps
	// its holder.
	enc.ModifyIndex = v.ModifyIndex
	enc.Lock = v.Lock.Copy()
	_, _, err = s.raftApply(structs.VarApplyStateRequestType, &structs.VarApplyStateRequest{Op: structs.VarOpCAS, Var: enc})
	if err != nil {
		return fmt.Errorf("rekey variable %s@%s: %w", v.Path, v.Namespace, err)
	}
	return nil
}
