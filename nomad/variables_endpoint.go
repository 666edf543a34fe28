package nomad

import (
	"fmt"
	"net/http"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Variables is the RPC endpoint of variables. Writes run on the leader,
// which seals the items with the active root key before they enter Raft;
// reads open them with the key that sealed them.
//
// Variables.Read and Variables.List are also how other server-side or
// client-side code (a template's nomadVar) reads variables over RPC.
type Variables struct {
	srv *Server
}

// Apply performs one write: set, cas, delete, delete-cas, lock-acquire or
// lock-release. A write that conflicts with the stored variable (its
// modify index, or a lock someone else holds) returns it in Conflict and
// is not an error.
func (v *Variables) Apply(args *structs.VariablesApplyRequest, reply *structs.VariablesApplyResponse) error {
	if done, err := v.srv.forward("Variables.Apply", args.WriteRequest, args, reply); done {
		return err
	}
	in := args.Var
	if in == nil {
		return structs.NewErrRPCCoded(http.StatusBadRequest, "missing variable")
	}
	in = in.Copy()
	if in.Namespace == "" {
		in.Namespace = args.Namespace
	}
	if in.Namespace == "" {
		in.Namespace = structs.DefaultNamespace
	}
	if err := in.Validate(args.Op); err != nil {
		return structs.NewErrRPCCoded(http.StatusBadRequest, err.Error())
	}
	st := v.srv.State()
	ns, err := st.NamespaceByName(nil, in.Namespace)
	if err != nil {
		return err
	}
	if ns == nil {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "variable %q is in nonexistent namespace %q", in.Path, in.Namespace)
	}
	key := structs.NamespacedID{Namespace: in.Namespace, ID: in.Path}
	now := time.Now()
	in.CreateTime, in.ModifyTime = now.UnixNano(), now.UnixNano()

	switch args.Op {
	case structs.VarOpSet, structs.VarOpCAS, structs.VarOpDelete, structs.VarOpDeleteCAS:
	case structs.VarOpLockAcquire:
		if until, ok := v.srv.varLocks.DelayedUntil(key, now); ok {
			return structs.NewErrRPCCodedf(http.StatusConflict, "variable %q: its lock lapsed and may not be taken again before %s (lock delay)", in.Path, until.UTC().Format(time.RFC3339))
		}
		lock := in.Lock.Copy()
		if lock == nil {
			lock = &structs.VariableLock{}
		}
		lock.Canonicalize()
		if err := lock.Validate(); err != nil {
			return structs.NewErrRPCCoded(http.StatusBadRequest, err.Error())
		}
		lock.ID = structs.GenerateUUID()
		in.Lock = lock
	case structs.VarOpLockRelease:
		if in.LockID() == "" {
			return structs.NewErrRPCCodedf(http.StatusBadRequest, "variable %q: lock-release needs the lock's ID (Lock.ID)", in.Path)
		}
	default:
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "unknown variable operation %q", args.Op)
	}

	enc := &structs.VariableEncrypted{VariableMetadata: in.VariableMetadata.Copy()}
	// A lock taken on a variable that does not exist yet creates it, with
	// no items but sealed like any other (the store indexes its key).
	sealEmpty := false
	if args.Op == structs.VarOpLockAcquire && len(in.Items) == 0 {
		existing, err := st.VariableByPath(nil, in.Namespace, in.Path)
		if err != nil {
			return err
		}
		sealEmpty = existing == nil
	}
	if len(in.Items) > 0 || sealEmpty {
		if st, err = v.srv.waitActiveRootKey(); err != nil {
			return fmt.Errorf("variable %q: %w", in.Path, err)
		}
		if enc, err = keyring.EncryptVariable(st, in); err != nil {
			return err
		}
	}
	raw, index, err := v.srv.raftApply(structs.VarApplyStateRequestType, &structs.VarApplyStateRequest{Op: args.Op, Var: enc, WriteRequest: args.WriteRequest})
	if err != nil {
		return err
	}
	resp, ok := raw.(*structs.VarApplyStateResponse)
	if !ok {
		return fmt.Errorf("variable write: unexpected FSM response %T", raw)
	}
	reply.Index = index
	reply.Result = resp.Result
	st = v.srv.State()
	if resp.Result == structs.VarOpResultConflict {
		reply.Conflict = &structs.VariableDecrypted{}
		if resp.Conflict != nil {
			if reply.Conflict, err = keyring.DecryptVariable(st, resp.Conflict); err != nil {
				return err
			}
		}
		return nil
	}

	switch args.Op {
	case structs.VarOpDelete, structs.VarOpDeleteCAS:
		v.srv.varLocks.Untrack(key)
		return nil
	case structs.VarOpLockAcquire:
		v.srv.varLocks.Track(key, resp.Written.Lock)
	case structs.VarOpLockRelease:
		v.srv.varLocks.Untrack(key)
		// The holder gives the lock back; it gets the variable's
		// metadata, not its items.
		reply.Output = &structs.VariableDecrypted{VariableMetadata: resp.Written.VariableMetadata.Copy()}
		return nil
	}
	reply.Output, err = keyring.DecryptVariable(st, resp.Written)
	return err
}

// RenewLock restarts the lease of a lock its holder still has. It writes
// nothing to Raft: leases live on the leader.
func (v *Variables) RenewLock(args *structs.VariablesRenewLockRequest, reply *structs.VariablesRenewLockResponse) error {
	if done, err := v.srv.forward("Variables.RenewLock", args.WriteRequest, args, reply); done {
		return err
	}
	if args.LockID == "" {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "variable %q: lock-renew needs the lock's ID (Lock.ID)", args.Path)
	}
	ns := args.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	stored, err := v.srv.State().VariableByPath(nil, ns, args.Path)
	if err != nil {
		return err
	}
	if stored == nil {
		return structs.NewErrRPCCoded(http.StatusNotFound, "variable not found")
	}
	if stored.LockID() != args.LockID {
		return structs.NewErrRPCCodedf(http.StatusConflict, "variable %q is not locked by lock %q", args.Path, args.LockID)
	}
	v.srv.varLocks.Track(structs.NamespacedID{Namespace: ns, ID: args.Path}, stored.Lock)
	meta := stored.VariableMetadata.Copy()
	reply.VarMeta = &meta
	reply.Index = stored.ModifyIndex
	return nil
}

// Read returns one variable with its items; Data is nil when it does not
// exist. It is a blocking query.
func (v *Variables) Read(args *structs.VariablesReadRequest, reply *structs.VariablesReadResponse) error {
	if done, err := v.srv.forward("Variables.Read", args.QueryOptions, args, reply); done {
		return err
	}
	if args.Namespace == "*" {
		return structs.NewErrRPCCoded(http.StatusBadRequest, `can not target wildcard ("*") namespace`)
	}
	return v.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		stored, err := st.VariableByPath(ws, args.Namespace, args.Path)
		if err != nil {
			return 0, err
		}
		reply.Data = nil
		if stored == nil {
			return maxIndex(st, state.TableVariables)
		}
		if reply.Data, err = keyring.DecryptVariable(st, stored); err != nil {
			return 0, err
		}
		return stored.ModifyIndex, nil
	})
}

// List returns the metadata of the variables of the query's namespace
// ("*": all) whose path starts with the query's prefix. It is a blocking
// query.
func (v *Variables) List(args *structs.VariablesListRequest, reply *structs.VariablesListResponse) error {
	if done, err := v.srv.forward("Variables.List", args.QueryOptions, args, reply); done {
		return err
	}
	return v.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		vars, err := st.VariablesByPrefix(ws, args.Namespace, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Data = make([]*structs.VariableMetadata, 0, len(vars))
		for _, sv := range vars {
			meta := sv.VariableMetadata.Copy()
			reply.Data = append(reply.Data, &meta)
		}
		if reply.Data, err = v.srv.visibleVariables(args.AuthToken, reply.Data); err != nil {
			return 0, err
		}
		return maxIndex(st, state.TableVariables)
	})
}

// rootKeyWait bounds how long a variable write waits for the leader's
// first root key, which a new cluster's leader writes just after it is
// elected: a write that arrives in between waits for it instead of
// failing.
const rootKeyWait = 10 * time.Second

// waitActiveRootKey returns a state store that holds an active root key,
// waiting on the root keys table (up to rootKeyWait) while there is none.
func (s *Server) waitActiveRootKey() (*state.StateStore, error) {
	deadline := time.NewTimer(rootKeyWait)
	defer deadline.Stop()
	for {
		st := s.State()
		ws := memdb.NewWatchSet()
		key, err := st.ActiveRootKey(ws)
		if err != nil {
			return nil, err
		}
		if key != nil {
			return st, nil
		}
		if ws.Watch(deadline.C) {
			return nil, fmt.Errorf("%w (waited %s for the leader to write it)", keyring.ErrNoActiveRootKey, rootKeyWait)
		}
	}
}
