package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Variables are encrypted at rest with the keyring's active root key,
// AES-256-GCM, as Nomad does. The namespace and path are the additional
// authenticated data, so sealed items cannot be moved to another
// variable; the random nonce is stored in front of the ciphertext.

// RootKeyReader finds a root key; the state store and its snapshots do.
type RootKeyReader interface {
	RootKeyByID(ws memdb.WatchSet, id string) (*structs.RootKey, error)
}

// variableAAD binds a variable's sealed items to its namespace and path.
func variableAAD(namespace, path string) []byte {
	return []byte(namespace + "\x00" + path)
}

func rootKeyAEAD(key *structs.RootKey) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key.Key)
	if err != nil {
		return nil, fmt.Errorf("root key %s: %w", key.KeyID, err)
	}
	return cipher.NewGCM(block)
}

// EncryptVariable seals v's items with the active root key.
func EncryptVariable(st *state.StateStore, v *structs.VariableDecrypted) (*structs.VariableEncrypted, error) {
	key, err := st.ActiveRootKey(nil)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, fmt.Errorf("encrypt variable %q: %w", v.Path, ErrNoActiveRootKey)
	}
	return SealVariable(key, v)
}

// SealVariable seals v's items with the given root key (a restore keeps
// the key that sealed a variable, active or not).
func SealVariable(key *structs.RootKey, v *structs.VariableDecrypted) (*structs.VariableEncrypted, error) {
	aead, err := rootKeyAEAD(key)
	if err != nil {
		return nil, err
	}
	plain, err := json.Marshal(v.Items)
	if err != nil {
		return nil, fmt.Errorf("encrypt variable %q: %w", v.Path, err)
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("encrypt variable %q: %w", v.Path, err)
	}
	return &structs.VariableEncrypted{
		VariableMetadata: v.VariableMetadata.Copy(),
		Data:             aead.Seal(nonce, nonce, plain, variableAAD(v.Namespace, v.Path)),
		KeyID:            key.KeyID,
	}, nil
}

// DecryptVariable opens v's items with the root key that sealed them. A
// variable without data (a lock that never had items) has no items.
func DecryptVariable(st RootKeyReader, v *structs.VariableEncrypted) (*structs.VariableDecrypted, error) {
	if v == nil {
		return nil, nil
	}
	out := &structs.VariableDecrypted{VariableMetadata: v.VariableMetadata.Copy()}
	if len(v.Data) == 0 {
		return out, nil
	}
	key, err := st.RootKeyByID(nil, v.KeyID)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, fmt.Errorf("decrypt variable %q: root key %s not found", v.Path, v.KeyID)
	}
	aead, err := rootKeyAEAD(key)
	if err != nil {
		return nil, err
	}
	n := aead.NonceSize()
	if len(v.Data) < n {
		return nil, fmt.Errorf("decrypt variable %q: sealed data is too short", v.Path)
	}
	plain, err := aead.Open(nil, v.Data[:n], v.Data[n:], variableAAD(v.Namespace, v.Path))
	if err != nil {
		return nil, fmt.Errorf("decrypt variable %q: %w", v.Path, err)
	}
	if err := json.Unmarshal(plain, &out.Items); err != nil {
		return nil, fmt.Errorf("decrypt variable %q: %w", v.Path, err)
	}
	return out, nil
}
