package nomad

import (
	"bytes"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/structs"
)

func applyVar(t *testing.T, s *Server, op structs.VarOp, v *structs.VariableDecrypted) *structs.VariablesApplyResponse {
	t.Helper()
	var reply structs.VariablesApplyResponse
	must.NoError(t, s.RPC("Variables.Apply", &structs.VariablesApplyRequest{Op: op, Var: v}, &reply))
	return &reply
}

func TestVariables_EncryptedAtRestAndReadBack(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)
	key := waitForKeyring(t, s)

	v := &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: "app/db"}, Items: structs.VariableItems{"password": "hunter2-very-secret"}}
	out := applyVar(t, s, structs.VarOpSet, v)
	must.Eq(t, structs.VarOpResultOk, out.Result)
	must.Eq(t, "default", out.Output.Namespace)
	must.Eq(t, v.Items, out.Output.Items)

	stored, err := s.State().VariableByPath(nil, "default", "app/db")
	must.NoError(t, err)
	must.Eq(t, key.KeyID, stored.KeyID)
	must.False(t, bytes.Contains(stored.Data, []byte("hunter2")), must.Sprint("the items are stored sealed"))

	// Sealed items are bound to their path: moved elsewhere they do not open.
	moved := stored.Copy()
	moved.Path = "app/other"
	_, err = keyring.DecryptVariable(s.State(), moved)
	must.ErrorContains(t, err, "message authentication failed")

	var read structs.VariablesReadResponse
	must.NoError(t, s.RPC("Variables.Read", &structs.VariablesReadRequest{Path: "app/db", QueryOptions: structs.QueryOptions{Namespace: "default"}}, &read))
	must.Eq(t, v.Items, read.Data.Items)
	must.Eq(t, out.Index, read.Index)

	var list structs.VariablesListResponse
	must.NoError(t, s.RPC("Variables.List", &structs.VariablesListRequest{QueryOptions: structs.QueryOptions{Namespace: "default", Prefix: "app"}}, &list))
	must.SliceLen(t, 1, list.Data)
	must.Eq(t, "app/db", list.Data[0].Path)
}

func TestVariables_RefusedWritesStoreNothing(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)
	waitForKeyring(t, s)
	big := string(make([]byte, structs.MaxVariableSize))
	cases := []struct {
		name string
		op   structs.VarOp
		v    *structs.VariableDecrypted
		want string
	}{
		{"no items", structs.VarOpSet, &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: "a"}}, "empty variables are invalid"},
		{"too large", structs.VarOpSet, &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: "a"}, Items: structs.VariableItems{"k": big}}, "limited to 64KiB"},
		{"bad path", structs.VarOpSet, &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: "a b"}, Items: structs.VariableItems{"k": "v"}}, `invalid path "a b"`},
		{"reserved path", structs.VarOpSet, &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: "nomad/other"}, Items: structs.VariableItems{"k": "v"}}, "top-level"},
		{"unknown namespace", structs.VarOpSet, &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: "a", Namespace: "nope"}, Items: structs.VariableItems{"k": "v"}}, `nonexistent namespace "nope"`},
		{"lock TTL out of range", structs.VarOpLockAcquire, &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: "a", Lock: &structs.VariableLock{TTL: time.Second}}}, "lock TTL 1s is out of range"},
		{"release without a lock ID", structs.VarOpLockRelease, &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: "a"}}, "needs the lock's ID"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reply structs.VariablesApplyResponse
			err := s.RPC("Variables.Apply", &structs.VariablesApplyRequest{Op: tc.op, Var: tc.v}, &reply)
			must.ErrorContains(t, err, tc.want)
			vars, err := s.State().VariablesByPrefix(nil, "*", "")
			must.NoError(t, err)
			must.SliceEmpty(t, vars)
		})
	}
}

func TestVariables_LockAcquireRenewRelease(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)
	waitForKeyring(t, s)
	base := structs.VariableMetadata{Path: "locks/a"}
	applyVar(t, s, structs.VarOpSet, &structs.VariableDecrypted{VariableMetadata: base, Items: structs.VariableItems{"k": "v"}})

	acq := applyVar(t, s, structs.VarOpLockAcquire, &structs.VariableDecrypted{VariableMetadata: base})
	must.Eq(t, structs.VarOpResultOk, acq.Result)
	must.NotEq(t, "", acq.Output.LockID())
	must.Eq(t, structs.VariableItems{"k": "v"}, acq.Output.Items, must.Sprint("taking the lock keeps the items"))
	must.Eq(t, structs.DefaultVariableLockTTL, acq.Output.Lock.TTL)

	again := applyVar(t, s, structs.VarOpLockAcquire, &structs.VariableDecrypted{VariableMetadata: base})
	must.Eq(t, structs.VarOpResultConflict, again.Result)
	must.Eq(t, acq.Output.LockID(), again.Conflict.LockID())

	var renew structs.VariablesRenewLockResponse
	must.NoError(t, s.RPC("Variables.RenewLock", &structs.VariablesRenewLockRequest{Path: base.Path, LockID: acq.Output.LockID()}, &renew))
	must.Eq(t, acq.Output.ModifyIndex, renew.VarMeta.ModifyIndex)
	err := s.RPC("Variables.RenewLock", &structs.VariablesRenewLockRequest{Path: base.Path, LockID: "not-mine"}, &renew)
	must.ErrorContains(t, err, `is not locked by lock "not-mine"`)

	held := base
	held.Lock = &structs.VariableLock{ID: acq.Output.LockID()}
	rel := applyVar(t, s, structs.VarOpLockRelease, &structs.VariableDecrypted{VariableMetadata: held})
	must.Eq(t, structs.VarOpResultOk, rel.Result)
	must.Nil(t, rel.Output.Lock)
	must.MapEmpty(t, rel.Output.Items)
	stored, err := s.State().VariableByPath(nil, "default", base.Path)
	must.NoError(t, err)
	must.Nil(t, stored.Lock)
	must.NotEq(t, 0, len(stored.Data), must.Sprint("releasing keeps the items"))
}
