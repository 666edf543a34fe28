package nomadfmt

import (
	"bytes"
	"context"
	"crypto/x509"
	"os"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	wrapping "github.com/hashicorp/go-kms-wrapping/v2"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/nomad/snapshot"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// fixtureStream returns the state stream of a snapshot archive written by
// real Nomad 2.0.6 (see testdata/nomad-2.0.6/README.md).
func fixtureStream(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open("testdata/nomad-2.0.6/" + name + ".snap")
	must.NoError(t, err)
	defer f.Close()
	var buf bytes.Buffer
	_, err = snapshot.Read(f, &buf)
	must.NoError(t, err)
	return buf.Bytes()
}

func readFixture(t *testing.T, name string) *Restored {
	t.Helper()
	res, err := Read(bytes.NewReader(fixtureStream(t, name)))
	must.NoError(t, err)
	return res
}

func countOf(counts []TypeCount, t SnapshotType) int {
	for _, c := range counts {
		if c.Type == t {
			return c.Count
		}
	}
	return 0
}

func TestRead_NomadFixture_Jobs(t *testing.T) {
	st := readFixture(t, "full").State

	sleepy, err := st.JobByID(nil, "default", "sleepy")
	must.NoError(t, err)
	must.NotNil(t, sleepy)
	must.Eq(t, structs.JobTypeBatch, sleepy.Type)
	must.Len(t, 1, sleepy.TaskGroups)
	must.Eq(t, "work", sleepy.TaskGroups[0].Name)
	must.NotNil(t, sleepy.TaskGroups[0].MaxRunDuration)
	must.Eq(t, time.Hour, *sleepy.TaskGroups[0].MaxRunDuration)
	task := sleepy.TaskGroups[0].Tasks[0]
	must.Eq(t, "raw_exec", task.Driver)
	must.Eq[any](t, "/bin/sh", task.Config["command"])
	must.Eq[any](t, []any{"-c", "echo sleepy ran"}, task.Config["args"])

	train, err := st.JobByID(nil, "research", "train")
	must.NoError(t, err)
	must.NotNil(t, train)
	must.Eq(t, 70, train.Priority)
	must.Eq(t, 30*time.Minute, *train.TaskGroups[0].MaxRunDuration)

	nightly, err := st.JobByID(nil, "default", "nightly")
	must.NoError(t, err)
	must.NotNil(t, nightly.Periodic)
	must.True(t, nightly.Periodic.Enabled)
	must.Eq(t, []string{"0 3 * * *"}, nightly.Periodic.Specs)
	must.Eq(t, "UTC", nightly.Periodic.TimeZone)
	must.True(t, nightly.Periodic.ProhibitOverlap)
	launch, err := st.PeriodicLaunchByID(nil, "default", "nightly")
	must.NoError(t, err)
	must.NotNil(t, launch)
	must.Positive(t, launch.Launch) // Nomad's time.Time, now Unix nanoseconds
	must.Greater(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(), launch.Launch)

	render, err := st.JobByID(nil, "default", "render")
	must.NoError(t, err)
	must.Eq(t, &structs.ParameterizedJobConfig{Payload: "optional", MetaRequired: []string{"scene"}, MetaOptional: []string{"frames"}}, render.ParameterizedJob)

	versions, err := st.JobVersionsByID(nil, "default", "sleepy")
	must.NoError(t, err)
	must.Len(t, 1, versions)
	sub, err := st.JobSubmission(nil, "default", "sleepy", sleepy.Version)
	must.NoError(t, err)
	must.NotNil(t, sub)
	must.StrContains(t, sub.Source, "max_run_duration")

	alloc, err := st.AllocByID(nil, "5f8203d6-b168-cc09-032c-eac85393c6be")
	must.NoError(t, err)
	must.NotNil(t, alloc)
	must.Eq(t, structs.AllocClientStatusComplete, alloc.ClientStatus)
	must.Eq(t, "sleepy", alloc.Job.ID)
	node, err := st.NodeByID(nil, "30377e82-db25-5c1a-fad0-06e17cad7ad1")
	must.NoError(t, err)
	must.Eq(t, "full", node.Name)

	// The restored store is at the snapshot's index or later.
	latest, err := st.LatestIndex()
	must.NoError(t, err)
	must.GreaterEq(t, uint64(26), latest)
}

func TestRead_NomadFixture_NamespacePoolAndConfig(t *testing.T) {
	st := readFixture(t, "full").State

	ns, err := st.NamespaceByName(nil, "research")
	must.NoError(t, err)
	must.NotNil(t, ns)
	must.Eq(t, "Research team workloads", ns.Description)
	must.Eq(t, map[string]string{"owner": "ml-lab", "tier": "gold"}, ns.Meta)

	pool, err := st.NodePoolByName(nil, "gpu")
	must.NoError(t, err)
	must.NotNil(t, pool)
	must.Eq(t, "Nodes with GPUs", pool.Description)
	must.Eq(t, map[string]string{"vendor": "acme"}, pool.Meta)

	// Nomad has no batch queue settings: nomadq's defaults stand.
	_, cfg, err := st.SchedulerConfig()
	must.NoError(t, err)
	must.NotNil(t, cfg)
	must.Eq(t, structs.DefaultSchedulerConfiguration().BatchQueue, cfg.BatchQueue)
	must.Eq(t, structs.SchedulerAlgorithmBinpack, cfg.SchedulerAlgorithm)
}

func TestRead_NomadFixture_ACL(t *testing.T) {
	st := readFixture(t, "full").State

	policy, err := st.ACLPolicyByName(nil, "research-read")
	must.NoError(t, err)
	must.NotNil(t, policy)
	must.Eq(t, "Read research jobs", policy.Description)
	must.StrContains(t, policy.Rules, `node_pool "gpu"`)

	token, err := st.ACLTokenBySecretID(nil, "6b9f9e32-5c0a-0c3b-f4d4-28cbf1b6223c")
	must.NoError(t, err)
	must.NotNil(t, token)
	must.Eq(t, "5a74b584-31aa-b3ee-637e-1e2c3475b9d2", token.AccessorID)
	must.Eq(t, "ci-reader", token.Name)
	must.Eq(t, []string{"research-read"}, token.Policies)

	mgmt, err := st.ACLTokenBySecretID(nil, "3f4a1b2c-5d6e-4f70-8a91-b2c3d4e5f607")
	must.NoError(t, err)
	must.NotNil(t, mgmt)
	must.Eq(t, structs.ACLManagementToken, mgmt.Type)
	boot, err := st.ACLBootstrapIndex()
	must.NoError(t, err)
	must.Positive(t, boot)

	role, err := st.ACLRoleByName(nil, "ops")
	must.NoError(t, err)
	must.NotNil(t, role)
	must.Eq(t, "e96fda7f-8050-b9f0-4725-8c94d667d33d", role.ID)
}

func TestRead_NomadFixture_VariablesAndRootKey(t *testing.T) {
	st := readFixture(t, "full").State

	key, err := st.RootKeyByID(nil, "ce97a4b7-e1a5-8a39-009e-9b3f390dae01")
	must.NoError(t, err)
	must.NotNil(t, key)
	must.True(t, key.IsActive())
	must.Len(t, 32, key.Key)
	_, err = x509.ParsePKCS1PrivateKey(key.RSAKey)
	must.NoError(t, err)

	for _, tc := range []struct {
		ns, path string
		items    structs.VariableItems
	}{
		{"default", "nomad/jobs/sleepy", structs.VariableItems{"user": "alice", "password": "s3cret"}},
		{"research", "shared/config", structs.VariableItems{"region": "eu-west", "size": "3"}},
	} {
		enc, err := st.VariableByPath(nil, tc.ns, tc.path)
		must.NoError(t, err)
		must.NotNil(t, enc)
		must.Eq(t, key.KeyID, enc.KeyID)
		dec, err := keyring.DecryptVariable(st, enc)
		must.NoError(t, err, must.Sprintf("variable %s@%s", tc.path, tc.ns))
		must.Eq(t, tc.items, dec.Items)
	}

	// Identities Nomad signed verify with the restored key.
	alloc, err := st.AllocByID(nil, "5f8203d6-b168-cc09-032c-eac85393c6be")
	must.NoError(t, err)
	if len(alloc.SignedIdentities) == 0 {
		t.Skip("the fixture's alloc carries no signed identity")
	}
	pub, err := keyring.New().PublicKey(key)
	must.NoError(t, err)
	rsaPub, err := x509.ParsePKCS1PublicKey(pub.PublicKey)
	must.NoError(t, err)
	for task, raw := range alloc.SignedIdentities {
		tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
		must.NoError(t, err, must.Sprintf("identity of task %s", task))
		must.Eq(t, key.KeyID, tok.Headers[0].KeyID)
		var claims jwt.Claims
		must.NoError(t, tok.Claims(rsaPub, &claims), must.Sprintf("identity of task %s", task))
	}
}

func TestRead_NomadFixture_Counts(t *testing.T) {
	res := readFixture(t, "full")
	must.Eq(t, "skipped 2 VariablesQuota records, 1 ClusterMetadata record", res.SkippedSummary())
	must.Eq(t, 4, countOf(res.Restored, JobSnapshot))
	must.Eq(t, 4, countOf(res.Restored, JobVersionSnapshot))
	must.Eq(t, 2, countOf(res.Restored, VariablesSnapshot))
	must.Eq(t, 1, countOf(res.Restored, RootKeySnapshot))
	must.Eq(t, 16, countOf(res.Restored, IndexSnapshot))

	// Every record's size is counted: with the header, the stream.
	raw := fixtureStream(t, "full")
	var total int64
	for _, c := range append(res.Restored, res.Skipped...) {
		total += c.Size
	}
	must.Eq(t, int64(len(raw))-1, total) // the header is one byte, 0x80

	small := readFixture(t, "small")
	must.Eq(t, "skipped 1 ClusterMetadata record", small.SkippedSummary())
	job, err := small.State.JobByID(nil, "small", "hello")
	must.NoError(t, err)
	must.NotNil(t, job)
	must.Nil(t, job.TaskGroups[0].MaxRunDuration)
}

// TestRead_OwnSnapshotRoundTrip reads what Write wrote: nomadq's state,
// with what only nomadq has (batch queue settings, autopilot
// configuration, usage resets), comes back.
func TestRead_OwnSnapshotRoundTrip(t *testing.T) {
	f := newWriteFixture(t)
	res, err := Read(bytes.NewReader(writeStream(t, f.store)))
	must.NoError(t, err)
	st := res.State
	must.Eq(t, "", res.SkippedSummary())

	for _, table := range []string{state.TableJobs, state.TableNamespaces, state.TableNodePools, state.TableACLTokens} {
		want, err := f.store.Index(table)
		must.NoError(t, err)
		got, err := st.Index(table)
		must.NoError(t, err)
		must.Eq(t, want, got, must.Sprintf("index of %s", table))
	}
	job, err := st.JobByID(nil, "team", "batch")
	must.NoError(t, err)
	must.Eq(t, f.batchJob.Version, job.Version)
	must.Eq(t, f.batchJob.Meta, job.Meta)

	wantLaunch, err := f.store.PeriodicLaunchByID(nil, "default", "nightly")
	must.NoError(t, err)
	gotLaunch, err := st.PeriodicLaunchByID(nil, "default", "nightly")
	must.NoError(t, err)
	must.Eq(t, wantLaunch.Launch, gotLaunch.Launch)

	enc, err := st.VariableByPath(nil, "team", f.varPath)
	must.NoError(t, err)
	dec, err := keyring.DecryptVariable(st, enc)
	must.NoError(t, err)
	must.Eq(t, f.items, dec.Items)
	key, err := st.RootKeyByID(nil, f.rootKey.KeyID)
	must.NoError(t, err)
	must.Eq(t, f.rootKey.Key, key.Key)
	must.Eq(t, f.rootKey.RSAKey, key.RSAKey)

	_, cfg, err := st.SchedulerConfig()
	must.NoError(t, err)
	must.True(t, cfg.BatchQueue.Enabled)
	must.Eq(t, "fifo", cfg.BatchQueue.Order)
	_, ap, err := st.AutopilotConfig(nil)
	must.NoError(t, err)
	must.NotNil(t, ap)
	must.Eq(t, uint64(321), ap.MaxTrailingLogs)
	resets, err := st.BatchQueueUsageResets(nil)
	must.NoError(t, err)
	must.Eq(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), resets["team"].UTC())
}

func TestRead_BadStreams(t *testing.T) {
	full := fixtureStream(t, "full")
	flipped := bytes.Clone(full)
	// The first record's object: a map header becomes 0xc1, a byte
	// msgpack never uses.
	flipped[2] = 0xc1

	for _, tc := range []struct {
		name   string
		stream []byte
		want   []string
	}{
		{"empty", nil, []string{"header", "unexpected EOF"}},
		{"not Nomad's", []byte{0x01, 0x02}, []string{"does not start with Nomad's header", "0x01"}},
		{"cut in a record", full[:len(full)/2], []string{"read snapshot record", "unexpected EOF"}},
		{"cut after a type byte", append(bytes.Clone(full), byte(JobSnapshot)), []string{"record 54 (Job)", "unexpected EOF"}},
		{"flipped byte", flipped, []string{"record 0 (Index)"}},
		{"unknown type", append(bytes.Clone(full), 99, 0xc0), []string{"record 54", "type byte 99", "newer Nomad"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Read(bytes.NewReader(tc.stream))
			must.Nil(t, res)
			must.Error(t, err)
			for _, w := range tc.want {
				must.StrContains(t, err.Error(), w)
			}
		})
	}
}

// kmsKey is a root key record wrapped only by an external KMS.
func kmsKey(id string) *WrappedRootKey {
	return &WrappedRootKey{
		RootKeyMeta: structs.RootKeyMeta{KeyID: id, Algorithm: structs.EncryptionAlgorithmAES256GCM, State: structs.RootKeyStateInactive},
		WrappedKeys: []*WrappedKey{{Provider: "awskms", ProviderID: "awskms"}},
	}
}

func TestRead_KeyWrappedByExternalKMS(t *testing.T) {
	const id = "6a1b2c3d-0000-4000-8000-000000000001"

	// Unused by any variable: left out, and said so.
	s, _ := stream(t, RootKeySnapshot, kmsKey(id))
	res, err := Read(bytes.NewReader(s))
	must.NoError(t, err)
	must.Eq(t, "skipped 1 WrappedRootKeys record", res.SkippedSummary())
	key, err := res.State.RootKeyByID(nil, id)
	must.NoError(t, err)
	must.Nil(t, key)

	// A variable needs it: refused, naming the key, the provider and the
	// variable.
	v := &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: "a/b"}, Data: make([]byte, 40), KeyID: id}
	s, _ = stream(t, RootKeySnapshot, kmsKey(id), VariablesSnapshot, v)
	res, err = Read(bytes.NewReader(s))
	must.Nil(t, res)
	must.ErrorContains(t, err, id)
	must.ErrorContains(t, err, "awskms")
	must.ErrorContains(t, err, `variable "a/b"`)

	// A variable whose key the snapshot does not carry at all.
	s, _ = stream(t, VariablesSnapshot, v)
	_, err = Read(bytes.NewReader(s))
	must.ErrorContains(t, err, "which the snapshot does not carry")
}

// TestRead_KeyWithoutRSAKey: a key made before Nomad 1.7 cannot be listed
// in nomadq's JWKS; unused, it is left out, needed, it is refused.
func TestRead_KeyWithoutRSAKey(t *testing.T) {
	key, err := keyring.NewRootKey(time.Now())
	must.NoError(t, err)
	key.RSAKey = nil
	w, err := wrapRootKey(key)
	must.NoError(t, err)
	s, _ := stream(t, RootKeySnapshot, w)
	res, err := Read(bytes.NewReader(s))
	must.NoError(t, err)
	must.Eq(t, "skipped 1 WrappedRootKeys record", res.SkippedSummary())

	v := &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: "old"}, Data: make([]byte, 40), KeyID: key.KeyID}
	s, _ = stream(t, RootKeySnapshot, w, VariablesSnapshot, v)
	_, err = Read(bytes.NewReader(s))
	must.ErrorContains(t, err, key.KeyID+" has no RSA signing key")
	must.ErrorContains(t, err, `variable "old"`)
}

func TestRead_LegacyKeyWithoutMaterial(t *testing.T) {
	const id = "6a1b2c3d-0000-4000-8000-000000000002"
	meta := &structs.RootKeyMeta{KeyID: id, Algorithm: structs.EncryptionAlgorithmAES256GCM, State: structs.RootKeyStateInactive}
	s, _ := stream(t, RootKeyMetaSnapshot, meta)
	res, err := Read(bytes.NewReader(s))
	must.NoError(t, err)
	must.Eq(t, "skipped 1 RootKeyMeta record", res.SkippedSummary())

	v := &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: "x"}, Data: make([]byte, 40), KeyID: id}
	s, _ = stream(t, RootKeyMetaSnapshot, meta, VariablesSnapshot, v)
	_, err = Read(bytes.NewReader(s))
	must.ErrorContains(t, err, "legacy key")
	must.ErrorContains(t, err, id)
}

func TestRead_HeaderOnly(t *testing.T) {
	s, _ := stream(t)
	res, err := Read(bytes.NewReader(s))
	must.NoError(t, err)
	must.SliceEmpty(t, res.Restored)
	must.SliceEmpty(t, res.Skipped)
	ns, err := res.State.NamespaceByName(nil, structs.DefaultNamespace)
	must.NoError(t, err)
	must.NotNil(t, ns)
	must.Eq(t, "", res.SkippedSummary())
}

// TestRead_AllocsShareTheirJob: Nomad writes each alloc with its whole
// job; the restored allocs of one job version hold one Job, with the
// version's row, as the live store does.
func TestRead_AllocsShareTheirJob(t *testing.T) {
	job := mock.Job("shared")
	node := mock.Node("7b1a7f3c-0000-4000-8000-000000000009")
	a1 := mock.Alloc(job, node, "")
	a2 := mock.Alloc(job, node, "")
	s, _ := stream(t, JobSnapshot, job, AllocSnapshot, a1, AllocSnapshot, a2, JobVersionSnapshot, job)
	res, err := Read(bytes.NewReader(s))
	must.NoError(t, err)
	got1, err := res.State.AllocByID(nil, a1.ID)
	must.NoError(t, err)
	got2, err := res.State.AllocByID(nil, a2.ID)
	must.NoError(t, err)
	must.True(t, got1.Job == got2.Job)
	row, err := res.State.JobByIDAndVersion(nil, job.Namespace, job.ID, job.Version)
	must.NoError(t, err)
	must.True(t, row == got1.Job)
}

// TestRead_AuthMethodInNomadsLayout: Nomad keeps an auth method's OIDC
// client assertion as an object, nomadq as its JSON.
func TestRead_AuthMethodInNomadsLayout(t *testing.T) {
	nomadMethod := map[string]any{
		"Name": "sso", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": int64(time.Hour),
		"Config": map[string]any{
			"OIDCDiscoveryURL":    "https://sso.example.com",
			"OIDCClientID":        "nomad",
			"OIDCClientAssertion": map[string]any{"KeySource": "nomad", "Audience": []any{"aud"}},
			"BoundAudiences":      []any{"nomad"},
		},
		"CreateIndex": uint64(7), "ModifyIndex": uint64(8),
	}
	plain := map[string]any{"Name": "jwt", "Type": "JWT", "Config": map[string]any{"JWKSURL": "https://keys.example.com", "OIDCClientAssertion": nil}}
	s, _ := stream(t, ACLAuthMethodSnapshot, nomadMethod, ACLAuthMethodSnapshot, plain)
	res, err := Read(bytes.NewReader(s))
	must.NoError(t, err)

	m, err := res.State.ACLAuthMethodByName(nil, "sso")
	must.NoError(t, err)
	must.NotNil(t, m)
	must.Eq(t, time.Hour, m.MaxTokenTTL)
	must.Eq(t, "https://sso.example.com", m.Config.OIDCDiscoveryURL)
	must.Eq(t, []string{"nomad"}, m.Config.BoundAudiences)
	must.Eq(t, `{"Audience":["aud"],"KeySource":"nomad"}`, string(m.Config.OIDCClientAssertion))

	j, err := res.State.ACLAuthMethodByName(nil, "jwt")
	must.NoError(t, err)
	must.Eq(t, "https://keys.example.com", j.Config.JWKSURL)
	must.SliceEmpty(t, j.Config.OIDCClientAssertion)
}

// TestRead_RootKeyVariants: Nomad's deprecated state becomes inactive, a
// PKCS#8 signing key is kept as PKCS#1, and a wrapping that does not open
// is refused.
func TestRead_RootKeyVariants(t *testing.T) {
	key, err := keyring.NewRootKey(time.Now())
	must.NoError(t, err)
	wrapped := func(mutate func(*WrappedRootKey, *WrappedKey)) *WrappedRootKey {
		w, err := wrapRootKey(key)
		must.NoError(t, err)
		mutate(w, w.WrappedKeys[0])
		return w
	}
	rewrap := func(wk *WrappedKey, plain []byte) *wrapping.BlobInfo {
		w, err := newAEADWrapper(key.KeyID, wk.KeyEncryptionKey)
		must.NoError(t, err)
		bi, err := w.Encrypt(context.Background(), plain)
		must.NoError(t, err)
		return bi
	}
	priv, err := x509.ParsePKCS1PrivateKey(key.RSAKey)
	must.NoError(t, err)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(priv)
	must.NoError(t, err)

	for _, tc := range []struct {
		name      string
		rec       *WrappedRootKey
		wantState structs.RootKeyState
		wantRSA   []byte
		wantErr   string
	}{
		{"deprecated", wrapped(func(w *WrappedRootKey, _ *WrappedKey) { w.State = "deprecated" }), structs.RootKeyStateInactive, key.RSAKey, ""},
		{"pkcs8", wrapped(func(_ *WrappedRootKey, wk *WrappedKey) { wk.WrappedRSAKey = rewrap(wk, pkcs8) }), structs.RootKeyStateActive, key.RSAKey, ""},
		{"provider left empty", wrapped(func(_ *WrappedRootKey, wk *WrappedKey) { wk.Provider = "" }), structs.RootKeyStateActive, key.RSAKey, ""},
		{"wrong KEK", wrapped(func(_ *WrappedRootKey, wk *WrappedKey) { wk.KeyEncryptionKey = make([]byte, 32) }), "", nil, "unwrap data encryption key"},
		{"unknown state", wrapped(func(w *WrappedRootKey, _ *WrappedKey) { w.State = "melted" }), "", nil, `state "melted"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.rec.State == "" {
				tc.rec.State = structs.RootKeyStateActive
			}
			s, _ := stream(t, RootKeySnapshot, tc.rec)
			res, err := Read(bytes.NewReader(s))
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				must.ErrorContains(t, err, key.KeyID)
				return
			}
			must.NoError(t, err)
			got, err := res.State.RootKeyByID(nil, key.KeyID)
			must.NoError(t, err)
			must.NotNil(t, got)
			must.Eq(t, tc.wantState, got.State)
			must.Eq(t, key.Key, got.Key)
			must.Eq(t, tc.wantRSA, got.RSAKey)
		})
	}
}
