package nomad

import (
	"errors"
	"net/http"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Keyring is the RPC endpoint of the root keyring.
type Keyring struct {
	srv *Server
}

// Rotate makes a new active root key; the old active key stays in the
// keyring, inactive, so identities it signed still verify. With a publish
// time the new key is prepublished instead: listed in the JWKS at once so
// that verifiers can fetch it before it signs anything, and made active by
// the leader at that time (publishRootKeys). With Full the old active key
// becomes rekeying: the leader re-encrypts its variables with the new key
// and then makes it inactive (rekeyVariables); the answer does not wait.
func (k *Keyring) Rotate(args *structs.KeyringRotateRequest, reply *structs.KeyringRotateResponse) error {
	if done, err := k.srv.forward("Keyring.Rotate", args.WriteRequest, args, reply); done {
		return err
	}
	if err := checkRotateRequest(args); err != nil {
		return err
	}
	key, err := keyring.NewRootKey(time.Now())
	if err != nil {
		return err
	}
	if args.PublishTime != 0 {
		key.State = structs.RootKeyStatePrepublished
		key.PublishTime = args.PublishTime
	}
	req := &structs.RootKeyUpsertRequest{RootKey: key, Rekey: args.Full, WriteRequest: args.WriteRequest}
	_, index, err := k.srv.raftApply(structs.RootKeyUpsertRequestType, req)
	if err != nil {
		return structs.WrapRPCCodedf(err, "rotate root key")
	}
	// Nomad answers with the key as it was before the write, so its
	// CreateIndex and ModifyIndex are 0: a client that then lists with
	// WaitIndex set to CreateIndex (the official client's own test does)
	// is answered at once rather than blocking. The write's index is in
	// reply.Index.
	reply.Key = key.Meta()
	reply.Key.CreateIndex, reply.Key.ModifyIndex = 0, 0
	reply.Index = index
	return nil
}

// checkRotateRequest refuses, by name, rotation options that are out of
// range or cannot go together.
func checkRotateRequest(args *structs.KeyringRotateRequest) error {
	if args.Algorithm != "" && args.Algorithm != structs.EncryptionAlgorithmAES256GCM {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "invalid algo %q: the only algorithm is %q", args.Algorithm, structs.EncryptionAlgorithmAES256GCM)
	}
	if args.PublishTime < 0 {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "invalid publish_time %d: must be a Unix time in nanoseconds", args.PublishTime)
	}
	if args.Full && args.PublishTime != 0 {
		return structs.NewErrRPCCoded(http.StatusBadRequest, "full and publish_time cannot be used together: a full rotation re-encrypts variables with a key that is active now")
	}
	return nil
}

// List returns the metadata of every root key.
func (k *Keyring) List(args *structs.GenericRequest, reply *structs.KeyringListResponse) error {
	if done, err := k.srv.forward("Keyring.List", args.QueryOptions, args, reply); done {
		return err
	}
	return k.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		keys, err := st.RootKeys(ws)
		if err != nil {
			return 0, err
		}
		reply.Keys = make([]*structs.RootKeyMeta, 0, len(keys))
		for _, key := range keys {
			reply.Keys = append(reply.Keys, key.Meta())
		}
		index, err := st.Index(state.TableRootKeys)
		return max(index, 1), err
	})
}

// ListPublic returns the public signing keys, the content of the JWKS.
// Every key in the keyring is listed: an inactive key still verifies the
// identities it signed.
func (k *Keyring) ListPublic(args *structs.GenericRequest, reply *structs.KeyringListPublicResponse) error {
	if done, err := k.srv.forward("Keyring.ListPublic", args.QueryOptions, args, reply); done {
		return err
	}
	return k.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		keys, err := st.RootKeys(ws)
		if err != nil {
			return 0, err
		}
		reply.PublicKeys = make([]*structs.KeyringPublicKey, 0, len(keys))
		for _, key := range keys {
			pub, err := k.srv.keyring.PublicKey(key)
			if err != nil {
				return 0, err
			}
			reply.PublicKeys = append(reply.PublicKeys, pub)
		}
		index, err := st.Index(state.TableRootKeys)
		return max(index, 1), err
	})
}

// Delete removes an inactive root key. A key that signed the identity of
// an allocation that still runs is kept unless Force is set: deleting it
// makes that identity unverifiable.
func (k *Keyring) Delete(args *structs.RootKeyDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := k.srv.forward("Keyring.Delete", args.WriteRequest, args, reply); done {
		return err
	}
	if args.KeyID == "" {
		return errors.New("root key ID is required")
	}
	st := k.srv.State()
	key, err := st.RootKeyByID(nil, args.KeyID)
	if err != nil {
		return err
	}
	if key == nil {
		return structs.NewErrNotFoundf("root key %q not found", args.KeyID)
	}
	if key.IsActive() {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "root key %q is active and cannot be deleted: rotate first", args.KeyID)
	}
	// Variables sealed with the key could never be read again; force
	// does not override that (the FSM refuses too).
	if vars, err := st.VariablesByKeyID(nil, args.KeyID); err != nil {
		return err
	} else if len(vars) > 0 {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "root key %q is in use and cannot be deleted: %d variable(s) are encrypted with it, the first %s in namespace %s", args.KeyID, len(vars), vars[0].Path, vars[0].Namespace)
	}
	if !args.Force {
		allocs, err := st.AllocsAnyOrder(nil)
		if err != nil {
			return err
		}
		for _, a := range allocs {
			if a.SigningKeyID == args.KeyID && !a.TerminalStatus() {
				return structs.NewErrRPCCodedf(http.StatusBadRequest, "root key %q is in use and cannot be deleted: allocation %s runs with an identity it signed; use force to delete it anyway", args.KeyID, a.ID)
			}
		}
	}
	_, index, err := k.srv.raftApply(structs.RootKeyDeleteRequestType, args)
	if errors.Is(err, state.ErrRootKeyKept) {
		// Activated or used to seal a variable since the checks above.
		return structs.NewErrRPCCoded(http.StatusBadRequest, err.Error())
	}
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}
