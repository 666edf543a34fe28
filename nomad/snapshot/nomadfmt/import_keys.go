package nomadfmt

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	wrapping "github.com/hashicorp/go-kms-wrapping/v2"

	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/structs"
)

// aeadMinCiphertext is the shortest blob the aead wrapper can open: a
// 12-byte nonce and a 16-byte GCM tag.
const aeadMinCiphertext = 12 + 16

// importRootKeys unwraps the root keys of a Nomad snapshot with the key
// encryption key Nomad's "aead" provider keeps beside each wrapped key.
// It returns the keys by ID and the rows to store. A key that nomadq
// cannot use (wrapped only by an external KMS, without an RSA signing
// key, or a legacy key whose material Nomad kept outside Raft) is left
// out when no variable uses it, and refused otherwise: the variable could
// not be read.
func importRootKeys(wrapped []*WrappedRootKey, legacy []*structs.RootKeyMeta, vars []*structs.VariableEncrypted) (map[string]*structs.RootKey, []*structs.RootKey, error) {
	usedBy := map[string]*structs.VariableEncrypted{}
	for _, v := range vars {
		if len(v.Data) > 0 && usedBy[v.KeyID] == nil {
			usedBy[v.KeyID] = v
		}
	}
	byID := make(map[string]*structs.RootKey, len(wrapped))
	rows := make([]*structs.RootKey, 0, len(wrapped))
	for _, w := range wrapped {
		k, whyNot, err := unwrapRootKey(w)
		if err != nil {
			return nil, nil, err
		}
		if k == nil {
			if v := usedBy[w.KeyID]; v != nil {
				return nil, nil, fmt.Errorf("root key %s %s, and variable %q in namespace %q is encrypted with it: rotate the keyring with \"nomad operator root keyring rotate -full\" on Nomad (with the aead provider configured) before taking the snapshot",
					w.KeyID, whyNot, v.Path, v.Namespace)
			}
			continue
		}
		byID[k.KeyID] = k
		rows = append(rows, k)
	}
	for _, m := range legacy {
		if byID[m.KeyID] != nil {
			continue
		}
		if v := usedBy[m.KeyID]; v != nil {
			return nil, nil, fmt.Errorf("root key %s is a legacy key whose material Nomad keeps in its keystore, not in the snapshot, and variable %q in namespace %q is encrypted with it: rotate the keyring with \"nomad operator root keyring rotate -full\" on Nomad before taking the snapshot",
				m.KeyID, v.Path, v.Namespace)
		}
	}
	return byID, rows, nil
}

// unwrapRootKey returns the key's material as nomadq keeps it, or nil and
// why nomadq cannot use it: no wrapping by the "aead" provider, or no RSA
// signing key (a key made before Nomad 1.7; nomadq lists every key's
// public signing key in its JWKS).
func unwrapRootKey(w *WrappedRootKey) (*structs.RootKey, string, error) {
	keyState, err := importKeyState(w.State)
	if err != nil {
		return nil, "", fmt.Errorf("root key %s: %w", w.KeyID, err)
	}
	if w.Algorithm != "" && w.Algorithm != structs.EncryptionAlgorithmAES256GCM {
		return nil, "", fmt.Errorf("root key %s: algorithm %q is not supported (nomadq supports %s)", w.KeyID, w.Algorithm, structs.EncryptionAlgorithmAES256GCM)
	}
	var providers []string
	for _, wk := range w.WrappedKeys {
		if wk == nil {
			continue
		}
		provider := wk.Provider
		if provider == "" {
			provider = KEKProviderAEAD
		}
		if provider != KEKProviderAEAD || len(wk.KeyEncryptionKey) == 0 {
			providers = append(providers, provider)
			continue
		}
		dek, rsaDER, err := unwrapAEAD(w.KeyID, wk)
		if err != nil {
			return nil, "", fmt.Errorf("root key %s: %w", w.KeyID, err)
		}
		if rsaDER == nil {
			return nil, "has no RSA signing key (made before Nomad 1.7)", nil
		}
		return &structs.RootKey{
			KeyID:       w.KeyID,
			Algorithm:   structs.EncryptionAlgorithmAES256GCM,
			CreateTime:  w.CreateTime,
			CreateIndex: w.CreateIndex,
			ModifyIndex: w.ModifyIndex,
			State:       keyState,
			PublishTime: w.PublishTime,
			RSAKey:      rsaDER,
			Key:         dek,
		}, "", nil
	}
	if len(providers) == 0 {
		return nil, "carries no wrapped key material", nil
	}
	sort.Strings(providers)
	return nil, "is wrapped only by KMS provider " + strings.Join(providers, ", ") + ", which nomadq cannot unwrap", nil
}

// unwrapAEAD opens the data encryption key and the RSA key of one aead
// wrapping, and returns the RSA key as PKCS#1 DER.
func unwrapAEAD(keyID string, wk *WrappedKey) (dek, rsaDER []byte, err error) {
	w, err := newAEADWrapper(keyID, wk.KeyEncryptionKey)
	if err != nil {
		return nil, nil, fmt.Errorf("key encryption key: %w", err)
	}
	if dek, err = openBlob(w, wk.WrappedDataEncryptionKey, nil); err != nil {
		return nil, nil, fmt.Errorf("unwrap data encryption key: %w", err)
	}
	if len(dek) != 32 {
		return nil, nil, fmt.Errorf("data encryption key is %d bytes, want 32 (AES-256)", len(dek))
	}
	if wk.WrappedRSAKey == nil || len(wk.WrappedRSAKey.Ciphertext) == 0 {
		return dek, nil, nil // a key made before Nomad 1.7
	}
	der, err := openBlob(w, wk.WrappedRSAKey, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("unwrap RSA key: %w", err)
	}
	if rsaDER, err = pkcs1(der); err != nil {
		return nil, nil, err
	}
	return dek, rsaDER, nil
}

// openBlob decrypts an aead blob, refusing one too short to hold a nonce
// and a tag (the wrapper would panic on it).
func openBlob(w interface {
	Decrypt(context.Context, *wrapping.BlobInfo, ...wrapping.Option) ([]byte, error)
}, bi *wrapping.BlobInfo, aad []byte) ([]byte, error) {
	if bi == nil || len(bi.Ciphertext) < aeadMinCiphertext {
		return nil, fmt.Errorf("ciphertext missing or too short")
	}
	var opts []wrapping.Option
	if aad != nil {
		opts = append(opts, wrapping.WithAad(aad))
	}
	return w.Decrypt(context.Background(), bi, opts...)
}

// pkcs1 returns an RSA private key as PKCS#1 DER, as nomadq keeps it;
// Nomad writes PKCS#1, PKCS#8 is taken too.
func pkcs1(der []byte) ([]byte, error) {
	if _, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return der, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("RSA key is neither PKCS#1 nor PKCS#8: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("signing key is a %T, not an RSA key", k)
	}
	return x509.MarshalPKCS1PrivateKey(rk), nil
}

// importKeyState maps Nomad's key states to nomadq's: Nomad's deprecated
// (a key kept only to read what it sealed) becomes inactive.
func importKeyState(s structs.RootKeyState) (structs.RootKeyState, error) {
	switch s {
	case structs.RootKeyStateActive, structs.RootKeyStateInactive, structs.RootKeyStatePrepublished, structs.RootKeyStateRekeying:
		return s, nil
	case "deprecated", "":
		return structs.RootKeyStateInactive, nil
	}
	return "", fmt.Errorf("state %q is not a root key state nomadq knows (active, inactive, prepublished, rekeying, deprecated)", s)
}

// importVariables opens each variable with its root key as Nomad sealed
// it (AES-256-GCM through the aead wrapper, the key ID as additional
// data, the nonce in front) and seals it again as nomadq does, with the
// same key.
func importVariables(keys map[string]*structs.RootKey, vars []*structs.VariableEncrypted) ([]*structs.VariableEncrypted, error) {
	out := make([]*structs.VariableEncrypted, 0, len(vars))
	for _, v := range vars {
		if len(v.Data) == 0 {
			out = append(out, v)
			continue
		}
		key := keys[v.KeyID]
		if key == nil {
			return nil, fmt.Errorf("variable %q in namespace %q is encrypted with root key %s, which the snapshot does not carry", v.Path, v.Namespace, v.KeyID)
		}
		w, err := newAEADWrapper(key.KeyID, key.Key)
		if err != nil {
			return nil, fmt.Errorf("variable %q in namespace %q: root key %s: %w", v.Path, v.Namespace, key.KeyID, err)
		}
		plain, err := openBlob(w, &wrapping.BlobInfo{Ciphertext: v.Data}, []byte(key.KeyID))
		if err != nil {
			return nil, fmt.Errorf("variable %q in namespace %q: decrypt with root key %s: %w", v.Path, v.Namespace, key.KeyID, err)
		}
		dec := &structs.VariableDecrypted{VariableMetadata: v.VariableMetadata}
		if err := json.Unmarshal(plain, &dec.Items); err != nil {
			return nil, fmt.Errorf("variable %q in namespace %q: items: %w", v.Path, v.Namespace, err)
		}
		sealed, err := keyring.SealVariable(key, dec)
		if err != nil {
			return nil, fmt.Errorf("variable %q in namespace %q: %w", v.Path, v.Namespace, err)
		}
		out = append(out, sealed)
	}
	return out, nil
}
