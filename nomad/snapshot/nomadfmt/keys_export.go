package nomadfmt

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"

	wrapping "github.com/hashicorp/go-kms-wrapping/v2"
	"github.com/hashicorp/go-kms-wrapping/wrappers/aead/v2"

	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// KEKProviderAEAD is the key encryption provider Nomad uses by default:
// the key encryption key travels in clear beside the keys it wraps.
const KEKProviderAEAD = "aead"

// WrappedKey is Nomad's record of a root key's material wrapped by one
// key encryption provider.
type WrappedKey struct {
	Provider                 string
	ProviderID               string
	WrappedDataEncryptionKey *wrapping.BlobInfo
	WrappedRSAKey            *wrapping.BlobInfo
	KeyEncryptionKey         []byte
}

// WrappedRootKey is Nomad's RootKey record: the key's metadata and its
// wrapped material.
type WrappedRootKey struct {
	// The key's metadata, inlined in the record as Nomad writes it.
	structs.RootKeyMeta
	WrappedKeys []*WrappedKey
}

// newAEADWrapper is the wrapper Nomad's aead provider and its variable
// encryption use: AES-256-GCM with key, named by the root key's ID.
func newAEADWrapper(keyID string, key []byte) (*aead.Wrapper, error) {
	w := aead.NewWrapper()
	if _, err := w.SetConfig(context.Background(),
		aead.WithAeadType(wrapping.AeadTypeAesGcm),
		aead.WithHashType(wrapping.HashTypeSha256),
		aead.WithKey(key),
		wrapping.WithKeyId(keyID),
	); err != nil {
		return nil, err
	}
	return w, nil
}

// wrapRootKey wraps k's data encryption key and RSA key (both as nomadq
// keeps them: 32 bytes of AES key, PKCS#1 DER) with a fresh key
// encryption key, as Nomad's aead provider does.
func wrapRootKey(k *structs.RootKey) (*WrappedRootKey, error) {
	kek := make([]byte, 32)
	if _, err := rand.Read(kek); err != nil {
		return nil, fmt.Errorf("root key %s: key encryption key: %w", k.KeyID, err)
	}
	w, err := newAEADWrapper(k.KeyID, kek)
	if err != nil {
		return nil, fmt.Errorf("root key %s: %w", k.KeyID, err)
	}
	wk := &WrappedKey{Provider: KEKProviderAEAD, ProviderID: KEKProviderAEAD, KeyEncryptionKey: kek, WrappedRSAKey: &wrapping.BlobInfo{}}
	if wk.WrappedDataEncryptionKey, err = w.Encrypt(context.Background(), k.Key); err != nil {
		return nil, fmt.Errorf("root key %s: wrap data encryption key: %w", k.KeyID, err)
	}
	if len(k.RSAKey) > 0 {
		if wk.WrappedRSAKey, err = w.Encrypt(context.Background(), k.RSAKey); err != nil {
			return nil, fmt.Errorf("root key %s: wrap RSA key: %w", k.KeyID, err)
		}
	}
	return &WrappedRootKey{RootKeyMeta: *k.Meta(), WrappedKeys: []*WrappedKey{wk}}, nil
}

// variableSealer seals variables with one root key as Nomad does.
type variableSealer struct {
	keyID   string
	wrapper *aead.Wrapper
}

// seal encrypts the JSON of a variable's items with the root key, the
// key's ID as additional data, the nonce in front (Nomad's layout).
func (s *variableSealer) seal(plain []byte) ([]byte, error) {
	bi, err := s.wrapper.Encrypt(context.Background(), plain, wrapping.WithAad([]byte(s.keyID)))
	if err != nil {
		return nil, err
	}
	return bi.Ciphertext, nil
}

// exportVariable re-seals v from nomadq's layout (its namespace and path
// as additional data) into Nomad's (its key ID as additional data), with
// the same root key. sealers caches a sealer per key.
func exportVariable(snap *state.StateSnapshot, sealers map[string]*variableSealer, v *structs.VariableEncrypted) (*structs.VariableEncrypted, error) {
	out := &structs.VariableEncrypted{VariableMetadata: v.VariableMetadata, KeyID: v.KeyID}
	if len(v.Data) == 0 {
		return out, nil
	}
	dec, err := keyring.DecryptVariable(snap, v)
	if err != nil {
		return nil, err
	}
	sealer, ok := sealers[v.KeyID]
	if !ok {
		key, err := snap.RootKeyByID(nil, v.KeyID)
		if err != nil {
			return nil, err
		}
		if key == nil {
			return nil, fmt.Errorf("variable %q: root key %s not found", v.Path, v.KeyID)
		}
		w, err := newAEADWrapper(key.KeyID, key.Key)
		if err != nil {
			return nil, fmt.Errorf("variable %q: root key %s: %w", v.Path, v.KeyID, err)
		}
		sealer = &variableSealer{keyID: key.KeyID, wrapper: w}
		sealers[v.KeyID] = sealer
	}
	plain, err := json.Marshal(dec.Items)
	if err != nil {
		return nil, fmt.Errorf("variable %q: %w", v.Path, err)
	}
	if out.Data, err = sealer.seal(plain); err != nil {
		return nil, fmt.Errorf("variable %q: seal: %w", v.Path, err)
	}
	return out, nil
}
