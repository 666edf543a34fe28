package nomad

import (
	"crypto/x509"
	"fmt"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/structs"
)

// waitForKeyring waits until s holds an active root key and returns it.
func waitForKeyring(t *testing.T, s *Server) *structs.RootKey {
	t.Helper()
	var key *structs.RootKey
	must.Wait(t, wait.InitialSuccess(
		wait.ErrorFunc(func() error {
			var err error
			key, err = s.State().ActiveRootKey(nil)
			if err != nil {
				return err
			}
			if key == nil {
				return fmt.Errorf("%s has no active root key yet", s.config.NodeName)
			}
			return nil
		}),
		wait.Timeout(20*time.Second),
		wait.Gap(10*time.Millisecond),
	))
	return key
}

// keyStates returns the state of every root key of s, by key ID.
func keyStates(t *testing.T, s *Server) map[string]structs.RootKeyState {
	t.Helper()
	keys, err := s.State().RootKeys(nil)
	must.NoError(t, err)
	out := make(map[string]structs.RootKeyState, len(keys))
	for _, k := range keys {
		out[k.KeyID] = k.State
	}
	return out
}

// verifyIdentity checks a workload identity against the public keys the
// server publishes and returns its claims.
func verifyIdentity(t *testing.T, s *Server, token string) (string, map[string]any) {
	t.Helper()
	var pub structs.KeyringListPublicResponse
	must.NoError(t, s.RPC("Keyring.ListPublic", &structs.GenericRequest{}, &pub))
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	must.NoError(t, err)
	must.SliceLen(t, 1, parsed.Headers)
	kid := parsed.Headers[0].KeyID
	for _, pk := range pub.PublicKeys {
		if pk.KeyID != kid {
			continue
		}
		must.Eq(t, structs.PubKeyAlgRS256, pk.Algorithm)
		key, err := x509.ParsePKCS1PublicKey(pk.PublicKey)
		must.NoError(t, err)
		claims := map[string]any{}
		must.NoError(t, parsed.Claims(key, &claims))
		return kid, claims
	}
	t.Fatalf("key %s of the identity is not among the %d published keys", kid, len(pub.PublicKeys))
	return "", nil
}

func TestKeyring_ReplicatedAcrossThreeServersAndRotated(t *testing.T) {
	s1 := testServer(t, clusterConfig(t, 3, nil))
	join := []string{s1.SerfAddr()}
	s2 := testServer(t, clusterConfig(t, 3, join))
	s3 := testServer(t, clusterConfig(t, 3, join))
	servers := []*Server{s1, s2, s3}
	leader := waitForLeader(t, servers...)
	first := waitForKeyring(t, leader)
	var follower *Server
	for _, s := range servers {
		if s != leader {
			follower = s
		}
	}

	// The first leader wrote one key; every server holds it, material
	// included, so any of them could lead and sign.
	for _, s := range servers {
		got := waitForKeyring(t, s)
		must.Eq(t, first.KeyID, got.KeyID)
		must.Eq(t, first.RSAKey, got.RSAKey, must.Sprintf("key material on %s", s.config.NodeName))
	}

	// A rotation sent to a follower is forwarded to the leader.
	var rot structs.KeyringRotateResponse
	must.NoError(t, follower.RPC("Keyring.Rotate", &structs.KeyringRotateRequest{}, &rot))
	must.NotNil(t, rot.Key)
	must.NotEq(t, first.KeyID, rot.Key.KeyID)
	must.Eq(t, structs.RootKeyStateActive, rot.Key.State)
	for _, s := range servers {
		waitForIndex(t, s, rot.Index)
		must.Eq(t, map[string]structs.RootKeyState{
			first.KeyID:   structs.RootKeyStateInactive,
			rot.Key.KeyID: structs.RootKeyStateActive,
		}, keyStates(t, s), must.Sprintf("keyring of %s", s.config.NodeName))
	}

	// The JWKS lists both keys: the old one still verifies what it signed.
	var list structs.KeyringListResponse
	must.NoError(t, follower.RPC("Keyring.List", &structs.GenericRequest{}, &list))
	must.SliceLen(t, 2, list.Keys)
	var pub structs.KeyringListPublicResponse
	must.NoError(t, follower.RPC("Keyring.ListPublic", &structs.GenericRequest{}, &pub))
	must.SliceLen(t, 2, pub.PublicKeys)
	for _, pk := range pub.PublicKeys {
		must.Eq(t, structs.PubKeyUseSig, pk.Use)
	}
}

func TestKeyring_RestoredFromSnapshot(t *testing.T) {
	dir := t.TempDir()
	cfg := func(c *Config) {
		c.DevMode = false
		c.DataDir = dir
		c.NumSchedulers = 0
	}
	s1 := testServer(t, cfg)
	waitForLeader(t, s1)
	first := waitForKeyring(t, s1)
	var rot structs.KeyringRotateResponse
	must.NoError(t, s1.RPC("Keyring.Rotate", &structs.KeyringRotateRequest{}, &rot))
	// The restart reads the keyring from a snapshot, not from the log.
	must.NoError(t, s1.raft.Snapshot().Error())
	before, err := s1.State().RootKeys(nil)
	must.NoError(t, err)
	must.NoError(t, s1.Shutdown())

	s2 := testServer(t, cfg)
	waitForLeader(t, s2)
	waitForIndex(t, s2, rot.Index)
	after, err := s2.State().RootKeys(nil)
	must.NoError(t, err)
	must.Eq(t, before, after, must.Sprint("the restored keyring, material included, is the one written"))
	active := waitForKeyring(t, s2)
	must.Eq(t, rot.Key.KeyID, active.KeyID, must.Sprint("the new leader found the keyring and made no key of its own"))
	must.MapContainsKey(t, keyStates(t, s2), first.KeyID)
}

func TestKeyring_RefusedRequestsWriteNothing(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)
	active := waitForKeyring(t, s)
	// The autopilot loop stores its default configuration after the
	// keyring; wait for that last write of a new leader before counting.
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		_, cfg, err := s.State().AutopilotConfig(nil)
		return err == nil && cfg != nil
	}), wait.Timeout(30*time.Second), wait.Gap(10*time.Millisecond)))
	before := s.raft.LastIndex()

	cases := []struct {
		name string
		call func() error
		want string
	}{
		{"full rotation with a publish time", func() error {
			return s.RPC("Keyring.Rotate", &structs.KeyringRotateRequest{Full: true, PublishTime: time.Now().Add(time.Hour).UnixNano()}, &structs.KeyringRotateResponse{})
		}, "full and publish_time cannot be used together"},
		{"negative publish time", func() error {
			return s.RPC("Keyring.Rotate", &structs.KeyringRotateRequest{PublishTime: -1}, &structs.KeyringRotateResponse{})
		}, "invalid publish_time -1"},
		{"other algorithm", func() error {
			return s.RPC("Keyring.Rotate", &structs.KeyringRotateRequest{Algorithm: "xchacha20"}, &structs.KeyringRotateResponse{})
		}, `invalid algo "xchacha20"`},
		{"delete the active key", func() error {
			return s.RPC("Keyring.Delete", &structs.RootKeyDeleteRequest{KeyID: active.KeyID}, &structs.GenericResponse{})
		}, "is active and cannot be deleted"},
		{"delete an unknown key", func() error {
			return s.RPC("Keyring.Delete", &structs.RootKeyDeleteRequest{KeyID: structs.GenerateUUID()}, &structs.GenericResponse{})
		}, "not found"},
		{"delete without an ID", func() error {
			return s.RPC("Keyring.Delete", &structs.RootKeyDeleteRequest{}, &structs.GenericResponse{})
		}, "root key ID is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.ErrorContains(t, tc.call(), tc.want)
		})
	}
	must.Eq(t, before, s.raft.LastIndex())
}

// A placed alloc carries an identity per task, signed by the active key
// and verifiable against the published keys; a rotation signs later
// placements with the new key, and the old key, still published, keeps
// verifying the first identity. A key in use is deleted only by force.
func TestKeyring_SignsWorkloadIdentitiesAtPlanApply(t *testing.T) {
	s := testServer(t, func(c *Config) { c.MinHeartbeatTTL = 10 * time.Minute })
	waitForLeader(t, s)
	first := waitForKeyring(t, s)
	registerNode(t, s)

	placed := func(jobID string) *structs.Allocation {
		t.Helper()
		registerJob(t, s, identityJob(jobID))
		waitEvalsTerminal(t, s, 30*time.Second)
		allocs, err := s.State().AllocsByJob(nil, structs.DefaultNamespace, jobID, true)
		must.NoError(t, err)
		must.SliceLen(t, 1, allocs)
		return allocs[0]
	}

	a := placed("signed")
	token := a.SignedIdentities["main"]
	must.NotEq(t, "", token)
	must.Eq(t, first.KeyID, a.SigningKeyID)
	kid, claims := verifyIdentity(t, s, token)
	must.Eq(t, first.KeyID, kid)
	must.Eq(t, "default", claims["nomad_namespace"])
	must.Eq(t, "signed", claims["nomad_job_id"])
	must.Eq[any](t, a.ID, claims["nomad_allocation_id"])
	must.Eq(t, "main", claims["nomad_task"])
	must.Eq(t, "global:default:signed:work:main:default", claims["sub"])
	must.Eq(t, structs.IdentityDefaultAud, claims["aud"])
	must.NotNil(t, claims["iat"])
	must.NotNil(t, claims["nbf"])
	must.NotNil(t, claims["jti"])

	var rot structs.KeyringRotateResponse
	must.NoError(t, s.RPC("Keyring.Rotate", &structs.KeyringRotateRequest{}, &rot))
	b := placed("after-rotation")
	kid, _ = verifyIdentity(t, s, b.SignedIdentities["main"])
	must.Eq(t, rot.Key.KeyID, kid)
	kid, _ = verifyIdentity(t, s, token)
	must.Eq(t, first.KeyID, kid, must.Sprint("the old key still verifies"))

	err := s.RPC("Keyring.Delete", &structs.RootKeyDeleteRequest{KeyID: first.KeyID}, &structs.GenericResponse{})
	must.ErrorContains(t, err, "is in use and cannot be deleted")
	var del structs.GenericResponse
	must.NoError(t, s.RPC("Keyring.Delete", &structs.RootKeyDeleteRequest{KeyID: first.KeyID, Force: true}, &del))
	waitForIndex(t, s, del.Index)
	must.Eq(t, map[string]structs.RootKeyState{rot.Key.KeyID: structs.RootKeyStateActive}, keyStates(t, s))
}

func TestFSM_RootKeyMessages(t *testing.T) {
	f := testFSM(t)
	old, err := keyring.NewRootKey(time.Now())
	must.NoError(t, err)
	mustApply(t, f, 1, structs.RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{RootKey: old})
	cur, err := keyring.NewRootKey(time.Now())
	must.NoError(t, err)
	mustApply(t, f, 2, structs.RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{RootKey: cur})

	stored, err := f.State().RootKeyByID(nil, old.KeyID)
	must.NoError(t, err)
	must.Eq(t, structs.RootKeyStateInactive, stored.State)
	must.Eq(t, old.RSAKey, stored.RSAKey)

	// The FSM refuses to delete the active key, on every server alike.
	resp := apply(t, f, 3, structs.RootKeyDeleteRequestType, &structs.RootKeyDeleteRequest{KeyID: cur.KeyID})
	must.ErrorContains(t, resp.(error), "is active and cannot be deleted")

	mustApply(t, f, 4, structs.RootKeyDeleteRequestType, &structs.RootKeyDeleteRequest{KeyID: old.KeyID})
	keys, err := f.State().RootKeys(nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, keys)
	must.Eq(t, cur.KeyID, keys[0].KeyID)
	must.Eq(t, "WrappedRootKeysUpsertRequestType", structs.RootKeyUpsertRequestType.String())
}

// identityJob is mockJob with its task's identity in the env.
func identityJob(id string) *structs.Job {
	job := mockJob(id)
	job.TaskGroups[0].Tasks[0].Identity = &structs.WorkloadIdentity{Env: true}
	return job
}

// A prepublished key is in the JWKS at once, signs nothing until its
// publish time, and is then made active by the leader, which demotes the
// key that was active.
func TestKeyring_PrepublishedKeyBecomesActive(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)
	first := waitForKeyring(t, s)

	publish := time.Now().Add(time.Second).UnixNano()
	var rot structs.KeyringRotateResponse
	must.NoError(t, s.RPC("Keyring.Rotate", &structs.KeyringRotateRequest{PublishTime: publish}, &rot))
	must.Eq(t, structs.RootKeyStatePrepublished, rot.Key.State)
	must.Eq(t, publish, rot.Key.PublishTime)
	var pub structs.KeyringListPublicResponse
	must.NoError(t, s.RPC("Keyring.ListPublic", &structs.GenericRequest{}, &pub))
	must.SliceLen(t, 2, pub.PublicKeys, must.Sprint("a prepublished key is published at once"))
	states := keyStates(t, s)
	if states[rot.Key.KeyID] == structs.RootKeyStatePrepublished {
		must.Eq(t, structs.RootKeyStateActive, states[first.KeyID], must.Sprint("the old key signs until the new one is due"))
	}

	// Watch the keyring (blocking queries) until the leader activates it.
	index := rot.Index
	deadline := time.Now().Add(30 * time.Second)
	for keyStates(t, s)[rot.Key.KeyID] != structs.RootKeyStateActive {
		must.True(t, time.Now().Before(deadline), must.Sprint("the prepublished key was not activated"))
		var list structs.KeyringListResponse
		must.NoError(t, s.RPC("Keyring.List", &structs.GenericRequest{QueryOptions: structs.QueryOptions{MinQueryIndex: index, MaxQueryTime: int64(5 * time.Second)}}, &list))
		index = list.Index
	}
	must.Eq(t, map[string]structs.RootKeyState{
		first.KeyID:   structs.RootKeyStateInactive,
		rot.Key.KeyID: structs.RootKeyStateActive,
	}, keyStates(t, s))
	active, err := s.State().ActiveRootKey(nil)
	must.NoError(t, err)
	must.Eq(t, int64(0), active.PublishTime, must.Sprint("activation clears the publish time, as in Nomad"))
}
