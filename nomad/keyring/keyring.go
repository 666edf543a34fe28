package keyring

import (
	"crypto/rsa"
	"crypto/x509"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Keyring turns the root keys of the state store into signers. Parsing an
// RSA key is costly, so parsed keys are kept by ID; a key's material never
// changes once written, so the cache never goes stale.
type Keyring struct {
	mu     sync.Mutex
	parsed map[string]*rsa.PrivateKey
}

// New returns a Keyring with no key parsed yet.
func New() *Keyring {
	return &Keyring{parsed: make(map[string]*rsa.PrivateKey)}
}

// PrivateKey returns the parsed signing key of a root key.
func (k *Keyring) PrivateKey(key *structs.RootKey) (*rsa.PrivateKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if priv, ok := k.parsed[key.KeyID]; ok {
		return priv, nil
	}
	priv, err := x509.ParsePKCS1PrivateKey(key.RSAKey)
	if err != nil {
		return nil, fmt.Errorf("keyring: root key %s: parse signing key: %w", key.KeyID, err)
	}
	k.parsed[key.KeyID] = priv
	return priv, nil
}

// PublicKey returns the public half of a root key's signing key.
func (k *Keyring) PublicKey(key *structs.RootKey) (*structs.KeyringPublicKey, error) {
	priv, err := k.PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &structs.KeyringPublicKey{
		KeyID:      key.KeyID,
		Algorithm:  structs.PubKeyAlgRS256,
		Use:        structs.PubKeyUseSig,
		CreateTime: key.CreateTime,
		PublicKey:  x509.MarshalPKCS1PublicKey(&priv.PublicKey),
	}, nil
}

// Signer signs tokens (the workload identities of one plan, a client
// introduction token) with the active root key of a state snapshot.
type Signer struct {
	key    *structs.RootKey
	signer jose.Signer
	now    time.Time
}

// Signer returns a Signer for the active key of st that dates what it
// signs at now.
func (k *Keyring) Signer(st *state.StateSnapshot, now time.Time) (*Signer, error) {
	key, err := st.ActiveRootKey(nil)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, ErrNoActiveRootKey
	}
	priv, err := k.PrivateKey(key)
	if err != nil {
		return nil, err
	}
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), key.KeyID)
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: priv}, opts)
	if err != nil {
		return nil, fmt.Errorf("keyring: signer for root key %s: %w", key.KeyID, err)
	}
	return &Signer{key: key, signer: sig, now: now}, nil
}

// Sign serializes claims as a JWT signed with the signer's key.
func (s *Signer) Sign(claims any) (string, error) {
	return jwt.Signed(s.signer).Claims(claims).Serialize()
}

// WorkloadClaims is the payload of a workload identity JWT: Nomad's
// nomad_* claims beside the registered ones.
type WorkloadClaims struct {
	structs.WorkloadIdentityClaims
	jwt.Claims
}

// SignAlloc gives every task of the alloc's group that can use an identity
// (Task.UsesWorkloadIdentity) and has none a signed default identity.
// Tasks keep an identity they already have, so an in-place update does
// not change a running task's token, and an update that gives a task a
// template or an identity block signs the identity it now needs.
func (s *Signer) SignAlloc(job *structs.Job, a *structs.Allocation) error {
	tg := job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return fmt.Errorf("keyring: sign alloc %s: job %q has no group %q", a.ID, job.ID, a.TaskGroup)
	}
	now := jwt.NewNumericDate(s.now)
	for _, task := range tg.Tasks {
		if _, ok := a.SignedIdentities[task.Name]; ok || !task.UsesWorkloadIdentity() {
			continue
		}
		claims := WorkloadClaims{
			WorkloadIdentityClaims: structs.WorkloadIdentityClaims{
				Namespace:    a.Namespace,
				JobID:        job.IDForWorkloadIdentity(),
				AllocationID: a.ID,
				TaskName:     task.Name,
			},
			Claims: jwt.Claims{
				ID:        structs.GenerateUUID(),
				Subject:   structs.WorkloadSubject(job, a.TaskGroup, task.Name, structs.WorkloadIdentityDefaultName),
				Audience:  jwt.Audience{structs.IdentityDefaultAud},
				IssuedAt:  now,
				NotBefore: now,
			},
		}
		token, err := s.Sign(claims)
		if err != nil {
			return fmt.Errorf("keyring: sign identity of task %q: %w", task.Name, err)
		}
		if a.SignedIdentities == nil {
			a.SignedIdentities = make(map[string]string, len(tg.Tasks))
		}
		a.SignedIdentities[task.Name] = token
		a.SigningKeyID = s.key.KeyID
	}
	return nil
}
