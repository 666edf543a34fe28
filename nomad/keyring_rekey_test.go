package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/structs"
)

// A full rotation answers at once with the new active key; the leader
// re-encrypts every variable the old key sealed (more than one batch, a
// locked one too) with it, then makes the old key inactive, after which
// the old key can be removed. The variables read back unchanged.
func TestKeyring_FullRotationRekeysVariables(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)
	old := waitForKeyring(t, s)

	n := rekeyBatchSize + 6
	want := map[string]structs.VariableItems{}
	for i := range n {
		path := fmt.Sprintf("app/v%03d", i)
		items := structs.VariableItems{"k": fmt.Sprintf("value-%d", i)}
		applyVar(t, s, structs.VarOpSet, &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: path}, Items: items})
		want[path] = items
	}
	locked := &structs.VariableDecrypted{
		VariableMetadata: structs.VariableMetadata{Path: "app/locked", Lock: &structs.VariableLock{ID: structs.GenerateUUID(), TTL: time.Hour}},
		Items:            structs.VariableItems{"held": "yes"},
	}
	lockID := applyVar(t, s, structs.VarOpLockAcquire, locked).Output.LockID()
	must.NotEq(t, "", lockID)
	want["app/locked"] = locked.Items
	sealed, err := s.State().VariablesByKeyID(nil, old.KeyID)
	must.NoError(t, err)
	must.SliceLen(t, n+1, sealed)

	var reply structs.KeyringRotateResponse
	must.NoError(t, s.RPC("Keyring.Rotate", &structs.KeyringRotateRequest{Full: true}, &reply))
	must.NotEq(t, old.KeyID, reply.Key.KeyID)
	must.Eq(t, structs.RootKeyStateActive, reply.Key.State)

	must.Wait(t, wait.InitialSuccess(
		wait.ErrorFunc(func() error {
			if st := keyStates(t, s)[old.KeyID]; st != structs.RootKeyStateInactive {
				return fmt.Errorf("old key is %s", st)
			}
			return nil
		}),
		wait.Timeout(60*time.Second),
		wait.Gap(20*time.Millisecond),
	))
	must.Eq(t, structs.RootKeyStateActive, keyStates(t, s)[reply.Key.KeyID])
	left, err := s.State().VariablesByKeyID(nil, old.KeyID)
	must.NoError(t, err)
	must.SliceEmpty(t, left)

	for path, items := range want {
		stored, err := s.State().VariableByPath(nil, "default", path)
		must.NoError(t, err)
		must.Eq(t, reply.Key.KeyID, stored.KeyID, must.Sprint(path))
		var read structs.VariablesReadResponse
		must.NoError(t, s.RPC("Variables.Read", &structs.VariablesReadRequest{Path: path, QueryOptions: structs.QueryOptions{Namespace: "default"}}, &read))
		must.Eq(t, items, read.Data.Items, must.Sprint(path))
	}
	stored, err := s.State().VariableByPath(nil, "default", "app/locked")
	must.NoError(t, err)
	must.NotNil(t, stored.Lock, must.Sprint("the lock survives the rekey"))
	must.Eq(t, lockID, stored.Lock.ID)

	must.NoError(t, s.RPC("Keyring.Delete", &structs.RootKeyDeleteRequest{KeyID: old.KeyID}, &structs.GenericResponse{}))
	_, present := keyStates(t, s)[old.KeyID]
	must.False(t, present)
}
