package nomad

import (
	"context"
	"slices"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/structs"
)

// publishRootKeys is the leader loop that makes each prepublished key
// active at its publish time. It watches the keyring, so a key
// prepublished while it waits is seen at once, and a new leader picks up
// where the old one stopped: the publish times are in Raft. It also
// retries writing the first key when that failed on leadership, since
// nothing can be placed without one.
func (s *Server) publishRootKeys(ctx context.Context) {
	for ctx.Err() == nil {
		st := s.State()
		ws := memdb.NewWatchSet()
		ws.Add(st.AbandonCh())
		keys, err := st.RootKeys(ws)
		if err != nil {
			s.logger.Error("keyring: read root keys", "error", err)
			keys = nil
		}
		if err == nil && !slices.ContainsFunc(keys, (*structs.RootKey).IsActive) {
			if err := s.initKeyring(); err != nil {
				s.logger.Error("keyring: write the first root key", "error", err)
			} else {
				continue
			}
		}
		key, wait := keyring.NextPublication(keys, time.Now())
		if key != nil && wait <= 0 {
			active := key.Copy()
			active.State = structs.RootKeyStateActive
			// Nomad clears the publish time of a key it activates.
			active.PublishTime = 0
			if _, _, err := s.raftApply(structs.RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{RootKey: active}); err != nil {
				s.logger.Error("keyring: activate prepublished root key", "key_id", key.KeyID, "error", err)
				wait = time.Second // retry, unless the keyring changes first
			} else {
				s.logger.Info("keyring: prepublished root key is now active", "key_id", key.KeyID)
				continue
			}
		}
		wctx, cancel := ctx, context.CancelFunc(func() {})
		switch {
		case key != nil:
			wctx, cancel = context.WithTimeout(ctx, wait)
		case err != nil || !slices.ContainsFunc(keys, (*structs.RootKey).IsActive):
			wctx, cancel = context.WithTimeout(ctx, time.Second) // retry
		}
		_ = ws.WatchCtx(wctx)
		cancel()
	}
}
