package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func sealedVar(path string, data string, modifyIndex uint64, lockID string) *structs.VariableEncrypted {
	v := &structs.VariableEncrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: path, ModifyIndex: modifyIndex, CreateTime: 10, ModifyTime: 20},
		Data:             []byte(data),
		KeyID:            "k1",
	}
	if lockID != "" {
		v.Lock = &structs.VariableLock{ID: lockID, TTL: structs.DefaultVariableLockTTL, LockDelay: structs.DefaultVariableLockDelay}
	}
	return v
}

func TestApplyVariable(t *testing.T) {
	type step struct {
		op         structs.VarOp
		v          *structs.VariableEncrypted
		wantResult structs.VarOpResult
	}
	cases := []struct {
		name     string
		steps    []step
		wantData string // "" : the variable is gone
		wantLock string
	}{
		{"set then set", []step{
			{structs.VarOpSet, sealedVar("a", "one", 0, ""), structs.VarOpResultOk},
			{structs.VarOpSet, sealedVar("a", "two", 0, ""), structs.VarOpResultOk},
		}, "two", ""},
		{"cas 0 creates, cas 0 again conflicts", []step{
			{structs.VarOpCAS, sealedVar("a", "one", 0, ""), structs.VarOpResultOk},
			{structs.VarOpCAS, sealedVar("a", "two", 0, ""), structs.VarOpResultConflict},
		}, "one", ""},
		{"cas at the stored index", []step{
			{structs.VarOpSet, sealedVar("a", "one", 0, ""), structs.VarOpResultOk},
			{structs.VarOpCAS, sealedVar("a", "two", 1, ""), structs.VarOpResultOk},
			{structs.VarOpCAS, sealedVar("a", "three", 1, ""), structs.VarOpResultConflict},
		}, "two", ""},
		{"cas on a missing variable", []step{
			{structs.VarOpCAS, sealedVar("a", "one", 7, ""), structs.VarOpResultConflict},
		}, "", ""},
		{"delete-cas at a stale index, then at the stored one", []step{
			{structs.VarOpSet, sealedVar("a", "one", 0, ""), structs.VarOpResultOk},
			{structs.VarOpDeleteCAS, sealedVar("a", "", 9, ""), structs.VarOpResultConflict},
			{structs.VarOpDeleteCAS, sealedVar("a", "", 1, ""), structs.VarOpResultOk},
		}, "", ""},
		{"delete of a missing variable is done", []step{
			{structs.VarOpDelete, sealedVar("a", "", 0, ""), structs.VarOpResultOk},
		}, "", ""},
		{"a lock keeps the items and shuts others out", []step{
			{structs.VarOpSet, sealedVar("a", "one", 0, ""), structs.VarOpResultOk},
			{structs.VarOpLockAcquire, sealedVar("a", "", 0, "L1"), structs.VarOpResultOk},
			{structs.VarOpLockAcquire, sealedVar("a", "", 0, "L2"), structs.VarOpResultConflict},
			{structs.VarOpSet, sealedVar("a", "stranger", 0, ""), structs.VarOpResultConflict},
			{structs.VarOpDelete, sealedVar("a", "", 0, ""), structs.VarOpResultConflict},
			{structs.VarOpLockRelease, sealedVar("a", "", 0, "L2"), structs.VarOpResultConflict},
			{structs.VarOpSet, sealedVar("a", "holder", 0, "L1"), structs.VarOpResultOk},
		}, "holder", "L1"},
		{"release, then anyone may write", []step{
			{structs.VarOpLockAcquire, sealedVar("a", "one", 0, "L1"), structs.VarOpResultOk},
			{structs.VarOpLockRelease, sealedVar("a", "", 0, "L1"), structs.VarOpResultOk},
			{structs.VarOpLockRelease, sealedVar("a", "", 0, "L1"), structs.VarOpResultConflict},
			{structs.VarOpSet, sealedVar("a", "two", 0, ""), structs.VarOpResultOk},
		}, "two", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			for i, st := range tc.steps {
				resp, err := s.ApplyVariable(uint64(i+1), st.op, st.v)
				must.NoError(t, err)
				must.Eq(t, st.wantResult, resp.Result, must.Sprintf("step %d (%s)", i+1, st.op))
			}
			got, err := s.VariableByPath(nil, "default", "a")
			must.NoError(t, err)
			if tc.wantData == "" {
				must.Nil(t, got)
				return
			}
			must.NotNil(t, got)
			must.Eq(t, tc.wantData, string(got.Data))
			must.Eq(t, tc.wantLock, got.LockID())
			must.Eq(t, 10, got.CreateTime)
		})
	}
}

func TestApplyVariable_ConflictReturnsStoredAndKeepsCreation(t *testing.T) {
	s := testStore(t)
	_, err := s.ApplyVariable(5, structs.VarOpSet, sealedVar("a", "one", 0, ""))
	must.NoError(t, err)
	resp, err := s.ApplyVariable(6, structs.VarOpSet, sealedVar("a", "two", 0, ""))
	must.NoError(t, err)
	must.Eq(t, 5, resp.Written.CreateIndex)
	must.Eq(t, 6, resp.Written.ModifyIndex)

	resp, err = s.ApplyVariable(7, structs.VarOpCAS, sealedVar("a", "three", 5, ""))
	must.NoError(t, err)
	must.Eq(t, structs.VarOpResultConflict, resp.Result)
	must.Eq(t, "two", string(resp.Conflict.Data))
	must.Eq(t, 6, resp.Conflict.ModifyIndex)
	idx, err := s.Index(TableVariables)
	must.NoError(t, err)
	must.Eq(t, 6, idx, must.Sprint("a conflict writes nothing"))
}

func TestVariables_PrefixListAndSnapshot(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertNamespaces(1, []*structs.Namespace{{Name: "prod"}}))
	for i, p := range []string{"app/db", "app/web", "other/x"} {
		_, err := s.ApplyVariable(uint64(i+2), structs.VarOpSet, sealedVar(p, p, 0, ""))
		must.NoError(t, err)
	}
	prodVar := sealedVar("app/prod", "p", 0, "")
	prodVar.Namespace = "prod"
	_, err := s.ApplyVariable(9, structs.VarOpSet, prodVar)
	must.NoError(t, err)

	paths := func(vs []*structs.VariableEncrypted) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.Namespace+":"+v.Path)
		}
		return out
	}
	got, err := s.VariablesByPrefix(nil, "default", "app/")
	must.NoError(t, err)
	must.Eq(t, []string{"default:app/db", "default:app/web"}, paths(got))
	got, err = s.VariablesByPrefix(nil, "*", "app")
	must.NoError(t, err)
	must.Eq(t, []string{"default:app/db", "default:app/web", "prod:app/prod"}, paths(got))

	restored := restoreCopy(t, s)
	after, err := restored.VariablesByPrefix(nil, "*", "")
	must.NoError(t, err)
	before, err := s.VariablesByPrefix(nil, "*", "")
	must.NoError(t, err)
	must.Eq(t, before, after)
	byKey, err := restored.VariablesByKeyID(nil, "k1")
	must.NoError(t, err)
	must.SliceLen(t, 4, byKey)
}

func TestDeleteRootKey_RefusedWhileVariablesUseIt(t *testing.T) {
	s := testStore(t)
	keyID := newID()
	must.NoError(t, s.UpsertRootKey(1, &structs.RootKey{KeyID: keyID, State: structs.RootKeyStateInactive}))
	v := sealedVar("app/db", "sealed", 0, "")
	v.KeyID = keyID
	_, err := s.ApplyVariable(2, structs.VarOpSet, v)
	must.NoError(t, err)

	err = s.DeleteRootKey(3, keyID)
	must.ErrorContains(t, err, `is in use and cannot be deleted: 1 variable(s) are encrypted with it`)
	key, err := s.RootKeyByID(nil, keyID)
	must.NoError(t, err)
	must.NotNil(t, key)

	_, err = s.ApplyVariable(4, structs.VarOpDelete, sealedVar("app/db", "", 0, ""))
	must.NoError(t, err)
	must.NoError(t, s.DeleteRootKey(5, keyID))
}
