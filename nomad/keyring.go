package nomad

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// rsaKeyBits is the size of a root key's signing key, Nomad's.
const rsaKeyBits = 2048

// errNoActiveRootKey answers a signing request before the first leader has
// written the keyring.
var errNoActiveRootKey = errors.New("keyring: no active root key yet")

// newRootKey generates an active root key: the RSA key that signs
// workload identities and the AES-256 key Nomad keeps beside it.
func newRootKey(now time.Time) (*structs.RootKey, error) {
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

// keyring turns the root keys of the state store into signers. Parsing an
// RSA key is costly, so parsed keys are kept by ID; a key's material never
// changes once written, so the cache never goes stale.
type keyring struct {
	mu     sync.Mutex
	parsed map[string]*rsa.PrivateKey
}

func newKeyring() *keyring {
	return &keyring{parsed: make(map[string]*rsa.PrivateKey)}
}

// privateKey returns the parsed signing key of a root key.
func (k *keyring) privateKey(key *structs.RootKey) (*rsa.PrivateKey, error) {
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

// publicKey returns the public half of a root key's signing key.
func (k *keyring) publicKey(key *structs.RootKey) (*structs.KeyringPublicKey, error) {
	priv, err := k.privateKey(key)
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

// identitySigner signs the workload identities of one plan with the
// active root key of a state snapshot.
type identitySigner struct {
	key    *structs.RootKey
	signer jose.Signer
	now    time.Time
}

// signer returns an identitySigner for the active key of st.
func (k *keyring) signer(st *state.StateSnapshot, now time.Time) (*identitySigner, error) {
	key, err := st.ActiveRootKey(nil)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, errNoActiveRootKey
	}
	priv, err := k.privateKey(key)
	if err != nil {
		return nil, err
	}
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), key.KeyID)
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: priv}, opts)
	if err != nil {
		return nil, fmt.Errorf("keyring: signer for root key %s: %w", key.KeyID, err)
	}
	return &identitySigner{key: key, signer: sig, now: now}, nil
}

// workloadClaims is the payload of a workload identity JWT: Nomad's
// nomad_* claims beside the registered ones.
type workloadClaims struct {
	structs.WorkloadIdentityClaims
	jwt.Claims
}

// signAlloc gives every task of the alloc's group that can use an identity
// (Task.UsesWorkloadIdentity) and has none a signed default identity.
// Tasks keep an identity they already have, so an in-place update does
// not change a running task's token, and an update that gives a task a
// template or an identity block signs the identity it now needs.
func (s *identitySigner) signAlloc(job *structs.Job, a *structs.Allocation) error {
	tg := job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return fmt.Errorf("keyring: sign alloc %s: job %q has no group %q", a.ID, job.ID, a.TaskGroup)
	}
	now := jwt.NewNumericDate(s.now)
	for _, task := range tg.Tasks {
		if _, ok := a.SignedIdentities[task.Name]; ok || !task.UsesWorkloadIdentity() {
			continue
		}
		claims := workloadClaims{
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
		token, err := jwt.Signed(s.signer).Claims(claims).Serialize()
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

// initKeyring writes the first root key when the cluster has none. Only a
// leader calls it, after its barrier, so the check sees every key an
// earlier leader wrote.
func (s *Server) initKeyring() error {
	active, err := s.State().ActiveRootKey(nil)
	if err != nil || active != nil {
		return err
	}
	key, err := newRootKey(time.Now())
	if err != nil {
		return err
	}
	if _, _, err := s.raftApply(structs.RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{RootKey: key}); err != nil {
		return fmt.Errorf("write the first root key: %w", err)
	}
	s.logger.Info("created the root keyring", "key_id", key.KeyID)
	return nil
}

// placement is an alloc of a plan on its way to Raft: as the scheduler
// planned it, as it will be written, and as it is stored (nil if new).
// presignPlan signs, on the worker that made the plan, the identities of
// the plan's new placements (allocs its snapshot does not hold). Signing
// is the largest single cost of a placement, and the plan applier is one
// goroutine every plan passes through: signing here lets the workers do
// it in parallel, and the applier only signs what is still unsigned
// (signAlloc skips tasks that have an identity). A failure leaves the
// work to the applier, which reports it.
func (s *Server) presignPlan(snap *state.StateSnapshot, plan *structs.Plan) {
	var signer *identitySigner
	for _, allocs := range plan.NodeAllocation {
		for _, a := range allocs {
			job := a.Job
			if job == nil {
				job = plan.Job
			}
			if !groupUsesIdentity(job, a.TaskGroup) {
				continue
			}
			if existing, err := snap.AllocByID(nil, a.ID); err != nil || existing != nil {
				continue // an update keeps the identities it has
			}
			if signer == nil {
				var err error
				if signer, err = s.keyring.signer(snap, time.Now()); err != nil {
					return
				}
			}
			// Never write into a map the scheduler may share with a
			// stored alloc.
			a.SignedIdentities = maps.Clone(a.SignedIdentities)
			if err := signer.signAlloc(job, a); err != nil {
				return
			}
		}
	}
}

// groupUsesIdentity reports whether any task of the job's group can use
// a workload identity; a nil job or an unknown group reports false.
func groupUsesIdentity(job *structs.Job, group string) bool {
	if job == nil {
		return false
	}
	tg := job.LookupTaskGroup(group)
	if tg == nil {
		return false
	}
	for _, task := range tg.Tasks {
		if task.UsesWorkloadIdentity() {
			return true
		}
	}
	return false
}

type placement struct {
	planned, write, existing *structs.Allocation
}

// signIdentities gives every task of the plan's placements that can use
// one a signed identity. A stored alloc keeps the identities it has.
// Signing costs about a millisecond per task and holds up the plan
// applier, so a plan's signatures are made in parallel, one worker per
// CPU; a plan none of whose tasks use an identity needs no root key.
func (s *Server) signIdentities(snap *state.StateSnapshot, plan *structs.Plan, placements []placement) error {
	var todo []int
	jobs := make([]*structs.Job, len(placements))
	for i, p := range placements {
		jobs[i] = p.planned.Job
		if jobs[i] == nil {
			jobs[i] = plan.Job
		}
		if jobs[i] == nil {
			return fmt.Errorf("sign identities of alloc %s: the plan carries no job", p.planned.ID)
		}
		keepIdentities(p.write, p.existing)
		if groupUsesIdentity(jobs[i], p.write.TaskGroup) {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	signer, err := s.keyring.signer(snap, time.Now())
	if err != nil {
		return err
	}
	errs := make([]error, len(placements))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(todo)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = signer.signAlloc(jobs[i], placements[i].write)
			}
		})
	}
	for _, i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// keepIdentities gives c, about to be written, its own copy of the
// identities it or the stored alloc has: the map may be the stored
// alloc's, which must never be written into.
func keepIdentities(c, existing *structs.Allocation) {
	ids := maps.Clone(c.SignedIdentities)
	if existing != nil {
		for task, token := range existing.SignedIdentities {
			if _, ok := ids[task]; !ok {
				if ids == nil {
					ids = make(map[string]string, len(existing.SignedIdentities))
				}
				ids[task] = token
			}
		}
		if c.SigningKeyID == "" {
			c.SigningKeyID = existing.SigningKeyID
		}
	}
	c.SignedIdentities = ids
}
