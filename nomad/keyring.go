package nomad

import (
	"fmt"
	"time"

	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/structs"
)

// initKeyring writes the first root key when the cluster has none. Only a
// leader calls it, after its barrier, so the check sees every key an
// earlier leader wrote.
func (s *Server) initKeyring() error {
	active, err := s.State().ActiveRootKey(nil)
	if err != nil || active != nil {
		return err
	}
	key, err := keyring.NewRootKey(time.Now())
	if err != nil {
		return err
	}
	if _, _, err := s.raftApply(structs.RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{RootKey: key}); err != nil {
		return fmt.Errorf("write the first root key: %w", err)
	}
	s.logger.Info("created the root keyring", "key_id", key.KeyID)
	return nil
}
