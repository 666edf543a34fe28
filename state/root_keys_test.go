package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func mockRootKey(st structs.RootKeyState) *structs.RootKey {
	return &structs.RootKey{
		KeyID:      newID(),
		Algorithm:  structs.EncryptionAlgorithmAES256GCM,
		CreateTime: 1_700_000_000_000_000_000,
		State:      st,
		RSAKey:     []byte{0x30, 0x82, 0x01},
		Key:        make([]byte, 32),
	}
}

func TestUpsertRootKey_OneActiveKey(t *testing.T) {
	s := testStore(t)
	first := mockRootKey(structs.RootKeyStateActive)
	must.NoError(t, s.UpsertRootKey(5, first))

	active, err := s.ActiveRootKey(nil)
	must.NoError(t, err)
	must.Eq(t, first.KeyID, active.KeyID)
	must.Eq(t, 5, active.CreateIndex)

	second := mockRootKey(structs.RootKeyStateActive)
	must.NoError(t, s.UpsertRootKey(6, second))

	keys, err := s.RootKeys(nil)
	must.NoError(t, err)
	must.SliceLen(t, 2, keys)
	states := map[string]structs.RootKeyState{}
	for _, k := range keys {
		states[k.KeyID] = k.State
	}
	must.Eq(t, map[string]structs.RootKeyState{
		first.KeyID:  structs.RootKeyStateInactive,
		second.KeyID: structs.RootKeyStateActive,
	}, states)
	old, err := s.RootKeyByID(nil, first.KeyID)
	must.NoError(t, err)
	must.Eq(t, 5, old.CreateIndex)
	must.Eq(t, 6, old.ModifyIndex)
	must.Eq(t, first.RSAKey, old.RSAKey, must.Sprint("demoting a key keeps its material for verification"))
	idx, err := s.Index(TableRootKeys)
	must.NoError(t, err)
	must.Eq(t, 6, idx)
}

func TestDeleteRootKey(t *testing.T) {
	s := testStore(t)
	old := mockRootKey(structs.RootKeyStateActive)
	must.NoError(t, s.UpsertRootKey(1, old))
	cur := mockRootKey(structs.RootKeyStateActive)
	must.NoError(t, s.UpsertRootKey(2, cur))

	cases := []struct {
		name string
		id   string
		want string
	}{
		{"active key", cur.KeyID, "is active and cannot be deleted"},
		{"unknown key", newID(), "not found"},
		{"inactive key", old.KeyID, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.DeleteRootKey(3, tc.id)
			if tc.want != "" {
				must.ErrorContains(t, err, tc.want)
				return
			}
			must.NoError(t, err)
			got, err := s.RootKeyByID(nil, tc.id)
			must.NoError(t, err)
			must.Nil(t, got)
		})
	}
	keys, err := s.RootKeys(nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, keys)
	must.Eq(t, cur.KeyID, keys[0].KeyID)
}

// A full rotation's upsert makes the active key rekeying, not inactive; a
// later rotation leaves a rekeying key as it is; the FSM's delete check
// keeps a rekeying key that variables are still sealed with.
func TestUpsertRootKeyRekey(t *testing.T) {
	s := testStore(t)
	first := mockRootKey(structs.RootKeyStateActive)
	must.NoError(t, s.UpsertRootKey(1, first))
	_, err := s.ApplyVariable(2, structs.VarOpSet, &structs.VariableEncrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: "app/db"},
		Data:             []byte("sealed"),
		KeyID:            first.KeyID,
	})
	must.NoError(t, err)

	second := mockRootKey(structs.RootKeyStateActive)
	must.NoError(t, s.UpsertRootKeyRekey(3, second))
	third := mockRootKey(structs.RootKeyStateActive)
	must.NoError(t, s.UpsertRootKey(4, third))

	keys, err := s.RootKeys(nil)
	must.NoError(t, err)
	states := map[string]structs.RootKeyState{}
	for _, k := range keys {
		states[k.KeyID] = k.State
	}
	must.Eq(t, map[string]structs.RootKeyState{
		first.KeyID:  structs.RootKeyStateRekeying,
		second.KeyID: structs.RootKeyStateInactive,
		third.KeyID:  structs.RootKeyStateActive,
	}, states)
	must.ErrorIs(t, s.DeleteRootKey(5, first.KeyID), ErrRootKeyKept)
}
