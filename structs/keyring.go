package structs

import "slices"

// Raft message types of the root keyring. They are Nomad's numbers
// (WrappedRootKeysUpsertRequestType and WrappedRootKeysDeleteRequestType),
// so that no other message of ours ever takes them.
const (
	RootKeyDeleteRequestType MessageType = 52
	RootKeyUpsertRequestType MessageType = 62
)

func init() {
	messageTypeNames[RootKeyDeleteRequestType] = "WrappedRootKeysDeleteRequestType"
	messageTypeNames[RootKeyUpsertRequestType] = "WrappedRootKeysUpsertRequestType"
}

// RootKeyState is where a root key is in its life, with Nomad's values.
type RootKeyState string

// Root key states. A rotation makes the new key active and the old one
// inactive; a rotation with a publish time makes the new key prepublished
// (in the JWKS, signing nothing) until the leader activates it at that
// time. A full rotation makes the old active key rekeying instead: the
// leader re-encrypts every variable it sealed with the new active key,
// then makes it inactive. Nomad's deprecated state is not used.
const (
	RootKeyStateInactive     RootKeyState = "inactive"
	RootKeyStateActive       RootKeyState = "active"
	RootKeyStatePrepublished RootKeyState = "prepublished"
	RootKeyStateRekeying     RootKeyState = "rekeying"
)

// EncryptionAlgorithmAES256GCM is the only encryption algorithm of a root
// key, as in Nomad.
const EncryptionAlgorithmAES256GCM = "aes256-gcm"

// Public signing key parameters, as Nomad publishes them in its JWKS.
const (
	// PubKeyAlgRS256 is the JWA name of RSA PKCS#1 v1.5 with SHA-256, the
	// algorithm workload identities are signed with.
	PubKeyAlgRS256 = "RS256"
	// PubKeyUseSig is the JWK "use" of a signing key.
	PubKeyUseSig = "sig"
)

// RootKey is a keyring entry: its metadata and its key material. The
// material is stored in Raft state (and so in snapshots) unwrapped; see
// website/workload-identity.md for why.
type RootKey struct {
	KeyID       string
	Algorithm   string
	CreateTime  int64
	CreateIndex uint64
	ModifyIndex uint64
	State       RootKeyState
	PublishTime int64

	// RSAKey is the PKCS#1 DER encoding of the RSA private key that signs
	// workload identities.
	RSAKey []byte
	// Key is the AES-256 data encryption key beside the signing key;
	// variables are sealed with it (AES-256-GCM).
	Key []byte
}

// IsActive reports whether the key signs new identities.
func (k *RootKey) IsActive() bool { return k.State == RootKeyStateActive }

// Meta returns the key's metadata without its material, the view that
// leaves the server.
func (k *RootKey) Meta() *RootKeyMeta {
	return &RootKeyMeta{
		KeyID:       k.KeyID,
		Algorithm:   k.Algorithm,
		CreateTime:  k.CreateTime,
		CreateIndex: k.CreateIndex,
		ModifyIndex: k.ModifyIndex,
		State:       k.State,
		PublishTime: k.PublishTime,
	}
}

// Copy returns a deep copy of the key.
func (k *RootKey) Copy() *RootKey {
	if k == nil {
		return nil
	}
	c := *k
	c.RSAKey = slices.Clone(k.RSAKey)
	c.Key = slices.Clone(k.Key)
	return &c
}

// RootKeyMeta is a root key without its material; its JSON is Nomad's
// api.RootKeyMeta.
type RootKeyMeta struct {
	KeyID       string
	Algorithm   string
	CreateTime  int64
	CreateIndex uint64
	ModifyIndex uint64
	State       RootKeyState
	PublishTime int64
}

// RootKeyUpsertRequest stores a root key. When the key is active, every
// other active key becomes inactive in the same transaction, so the
// keyring always has at most one active key. With Rekey (a full
// rotation) those keys become rekeying instead.
type RootKeyUpsertRequest struct {
	RootKey *RootKey
	Rekey   bool
	WriteRequest
}

// RootKeyDeleteRequest deletes an inactive root key.
type RootKeyDeleteRequest struct {
	KeyID string
	Force bool
	WriteRequest
}

// KeyringRotateRequest asks the leader for a new root key: active now, or
// prepublished until PublishTime (Unix nanoseconds) when that is set. Full
// also re-encrypts every variable with the new key (not with PublishTime).
type KeyringRotateRequest struct {
	Algorithm   string
	Full        bool
	PublishTime int64
	WriteRequest
}

// KeyringRotateResponse answers Keyring.Rotate with the new key's
// metadata.
type KeyringRotateResponse struct {
	Key *RootKeyMeta
	WriteMeta
}

// KeyringListResponse answers Keyring.List.
type KeyringListResponse struct {
	Keys []*RootKeyMeta
	QueryMeta
}

// KeyringPublicKey is the public half of a signing key.
type KeyringPublicKey struct {
	KeyID      string
	Algorithm  string
	Use        string
	CreateTime int64
	// PublicKey is the PKCS#1 DER encoding of the RSA public key.
	PublicKey []byte
}

// KeyringListPublicResponse answers Keyring.ListPublic.
type KeyringListPublicResponse struct {
	PublicKeys []*KeyringPublicKey
	QueryMeta
}
