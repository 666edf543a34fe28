package keyring

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// rsaKeyBits is the size of a root key's signing key, Nomad's.
const rsaKeyBits = 2048

// ErrNoActiveRootKey answers a signing or encryption request before the
// first leader has written the keyring.
var ErrNoActiveRootKey = errors.New("keyring: no active root key yet")

// NewRootKey generates an active root key: the RSA key that signs
// workload identities and the AES-256 key Nomad keeps beside it.
func NewRootKey(now time.Time) (*structs.RootKey, error) {
	priv, err := rsa.GenerateKey(rand.Reader, rsaKeyBits)
	if err != nil {
		return nil, fmt.Errorf("keyring: generate signing key: %w", err)
	}
	aes := make([]byte, 32)
	if _, err := rand.Read(aes); err != nil {
		return nil, fmt.Errorf("keyring: generate encryption key: %w", err)
	}
	return &structs.RootKey{
		KeyID:      structs.GenerateUUID(),
		Algorithm:  structs.EncryptionAlgorithmAES256GCM,
		CreateTime: now.UnixNano(),
		State:      structs.RootKeyStateActive,
		RSAKey:     x509.MarshalPKCS1PrivateKey(priv),
		Key:        aes,
	}, nil
}

// NextPublication returns the prepublished key whose publish time comes
// first and how long until it is due (zero or less: due now), or nil when
// no key is prepublished. Ties go to the lower key ID, so every leader
// picks the same key.
func NextPublication(keys []*structs.RootKey, now time.Time) (*structs.RootKey, time.Duration) {
	var next *structs.RootKey
	for _, k := range keys {
		if k.State != structs.RootKeyStatePrepublished {
			continue
		}
		if next == nil || k.PublishTime < next.PublishTime || k.PublishTime == next.PublishTime && k.KeyID < next.KeyID {
			next = k
		}
	}
	if next == nil {
		return nil, 0
	}
	return next, time.Unix(0, next.PublishTime).Sub(now)
}
