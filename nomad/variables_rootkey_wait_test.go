package nomad

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/nomad/keyring"
)

// A variable write that reaches a leader before its first root key waits
// for the key instead of failing; the server here never elects (it waits
// for a second server), so no key comes but the one the test writes.
func TestVariables_WriteWaitsForFirstRootKey(t *testing.T) {
	s := testServer(t, func(c *Config) {
		c.DevMode = false
		c.DataDir = t.TempDir()
		c.BootstrapExpect = 2
	})
	key, err := keyring.NewRootKey(time.Now())
	must.NoError(t, err)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = s.State().UpsertRootKey(10, key)
	}()
	st, err := s.waitActiveRootKey()
	must.NoError(t, err)
	active, err := st.ActiveRootKey(nil)
	must.NoError(t, err)
	must.NotNil(t, active)
	must.Eq(t, key.KeyID, active.KeyID)
}
