package nomadfmt

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/shoenig/test/must"

	wrapping "github.com/hashicorp/go-kms-wrapping/v2"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/nomad/snapshot"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// writeFixture is the state the write tests snapshot: what a migration
// carries.
type writeFixture struct {
	store    *state.StateStore
	rootKey  *structs.RootKey
	items    structs.VariableItems
	varPath  string
	batchJob *structs.Job
}

func newWriteFixture(t *testing.T) *writeFixture {
	t.Helper()
	st, err := state.NewStateStore()
	must.NoError(t, err)
	f := &writeFixture{store: st, varPath: "nomad/jobs/batch", items: structs.VariableItems{"user": "alice", "pass": "s3cret"}}
	idx := uint64(100)
	next := func() uint64 { idx++; return idx }

	must.NoError(t, st.UpsertNamespaces(next(), []*structs.Namespace{{Name: "team", Description: "the team", Meta: map[string]string{"owner": "ops"}}}))
	must.NoError(t, st.UpsertNodePools(next(), []*structs.NodePool{{Name: "gpu", Description: "GPU nodes", Meta: map[string]string{"kind": "a100"}}}))
	node := mock.Node("7b1a7f3c-0000-4000-8000-000000000001")
	node.SecretID = "7b1a7f3c-0000-4000-8000-0000000000ff" // Nomad indexes it as a UUID
	must.NoError(t, st.UpsertNode(next(), node))

	batch := mock.Job("batch")
	batch.Namespace = "team"
	must.NoError(t, st.UpsertJob(next(), batch))
	batch2 := mock.Job("batch")
	batch2.Namespace = "team"
	batch2.Meta = map[string]string{"v": "2"}
	must.NoError(t, st.UpsertJob(next(), batch2))
	f.batchJob, err = st.JobByID(nil, "team", "batch")
	must.NoError(t, err)

	periodic := mock.Job("nightly")
	periodic.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "0 3 * * *", SpecType: structs.PeriodicSpecCron, ProhibitOverlap: true, TimeZone: "UTC"}
	must.NoError(t, st.UpsertJob(next(), periodic))
	child := mock.Job("nightly/periodic-1700000000")
	child.ParentID = "nightly"
	launch := &structs.PeriodicLaunch{ID: "nightly", Namespace: structs.DefaultNamespace, Launch: time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC).UnixNano()}
	must.NoError(t, st.UpsertPeriodicLaunch(next(), child, mock.JobEval(child), launch))

	// A periodic job never launched: nomadq keeps no launch record for it.
	hourly := mock.Job("hourly")
	hourly.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "0 * * * *", SpecType: structs.PeriodicSpecCron}
	hourly.SubmitTime = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC).UnixNano()
	must.NoError(t, st.UpsertJob(next(), hourly))

	param := mock.Job("render")
	param.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: structs.DispatchPayloadRequired, MetaRequired: []string{"frame"}}
	must.NoError(t, st.UpsertJob(next(), param))

	eval := mock.JobEval(f.batchJob)
	must.NoError(t, st.UpsertEvals(next(), []*structs.Evaluation{eval}))
	must.NoError(t, st.UpsertAllocs(next(), []*structs.Allocation{mock.Alloc(f.batchJob, node, eval.ID)}))

	must.NoError(t, st.UpsertACLPolicies(next(), []*structs.ACLPolicy{{Name: "readonly", Description: "read", Rules: `namespace "default" { policy = "read" }`}}))
	must.NoError(t, st.UpsertACLTokens(next(), []*structs.ACLToken{{
		AccessorID: "0b9f4e0a-0000-4000-8000-000000000002", SecretID: "0b9f4e0a-0000-4000-8000-000000000003",
		Name: "reader", Type: structs.ACLClientToken, Policies: []string{"readonly"}, CreateTime: time.Now().UTC(),
	}}))

	must.NoError(t, st.UpsertACLRoles(next(), []*structs.ACLRole{{
		ID: "5d1e6c1a-0000-4000-8000-000000000004", Name: "readers", Policies: []*structs.ACLRolePolicyLink{{Name: "readonly"}},
	}}))
	must.NoError(t, st.UpsertACLAuthMethods(next(), []*structs.ACLAuthMethod{{
		Name: "jwt", Type: "JWT", TokenLocality: "local", MaxTokenTTL: time.Hour,
		CreateTime: time.Now().UTC(), ModifyTime: time.Now().UTC(),
		Config: &structs.ACLAuthMethodConfig{
			JWKSURL:             "https://idp.example/jwks",
			OIDCClientAssertion: json.RawMessage(`{"Audience":["nomad"],"KeySource":"nomad"}`),
		},
	}}))
	must.NoError(t, st.UpsertACLBindingRules(next(), []*structs.ACLBindingRule{{
		ID: "5d1e6c1a-0000-4000-8000-000000000005", AuthMethod: "jwt", Selector: `"ops" in list.groups`,
		BindType: "role", BindName: "readers", CreateTime: time.Now().UTC(), ModifyTime: time.Now().UTC(),
	}}))
	count := int64(2)
	must.NoError(t, st.UpsertScalingEvent(next(), &structs.ScalingEventRequest{
		Namespace: "team", JobID: "batch", TaskGroup: "work",
		ScalingEvent: &structs.ScalingEvent{Time: time.Now().UnixNano(), Count: &count, PreviousCount: 1, Message: "scaled up"},
	}))

	f.rootKey, err = keyring.NewRootKey(time.Now())
	must.NoError(t, err)
	must.NoError(t, st.UpsertRootKey(next(), f.rootKey))
	enc, err := keyring.EncryptVariable(st, &structs.VariableDecrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: "team", Path: f.varPath},
		Items:            f.items,
	})
	must.NoError(t, err)
	_, err = st.ApplyVariable(next(), structs.VarOpSet, enc)
	must.NoError(t, err)

	cfg := structs.DefaultSchedulerConfiguration()
	cfg.BatchQueue.Enabled = true
	cfg.BatchQueue.Order = "fifo"
	_, err = st.SchedulerSetConfig(next(), cfg)
	must.NoError(t, err)
	// A job waiting in the batch queue, held there by its owner.
	st.SetBatchQueueRouter(func(e *structs.Evaluation, _ state.BatchQueueFacts) (state.BatchQueueRouting, error) {
		if e.JobID == "queued" && e.Status == structs.EvalStatusPending {
			return state.BatchQueueEnqueue, nil
		}
		return state.BatchQueuePass, nil
	})
	queued := mock.Job("queued")
	must.NoError(t, st.UpsertJobWithEval(next(), queued, mock.JobEval(queued)))
	must.NoError(t, st.BatchQueueControl(next(), &structs.BatchQueueControlRequest{
		JobID: "queued", Op: structs.BatchQueueHold, WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace},
	}))
	_, err = st.AutopilotSetConfig(next(), &structs.AutopilotConfig{CleanupDeadServers: true, MaxTrailingLogs: 321, LastContactThreshold: 300 * time.Millisecond}, false, 0)
	must.NoError(t, err)
	must.NoError(t, st.BatchQueueUsageReset(next(), &structs.BatchQueueUsageResetRequest{Time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).UnixNano(), WriteRequest: structs.WriteRequest{Namespace: "team"}}))
	return f
}

// decodedRecord is one record of a stream, decoded without a schema.
type decodedRecord struct {
	Type SnapshotType
	Raw  []byte // the msgpack object
	Obj  map[string]any
}

// decodeStream splits a Nomad stream into its records the way Nomad's
// restore reads it: the header, then a type byte and one object at a
// time, to the end of the stream.
func decodeStream(t *testing.T, stream []byte) []decodedRecord {
	t.Helper()
	r := bufio.NewReader(bytes.NewReader(stream))
	var header map[string]any
	must.NoError(t, codec.NewDecoder(r, Handle).Decode(&header))
	must.MapEmpty(t, header)
	var out []decodedRecord
	for {
		b, err := r.ReadByte()
		if errors.Is(err, io.EOF) {
			return out
		}
		must.NoError(t, err)
		var raw codec.Raw
		must.NoError(t, codec.NewDecoder(r, Handle).Decode(&raw))
		rec := decodedRecord{Type: SnapshotType(b), Raw: raw}
		must.NoError(t, codec.NewDecoderBytes(raw, Handle).Decode(&rec.Obj))
		out = append(out, rec)
	}
}

func writeStream(t *testing.T, st *state.StateStore) []byte {
	t.Helper()
	snap, err := st.Snapshot()
	must.NoError(t, err)
	var buf bytes.Buffer
	n, err := Write(&buf, snap)
	must.NoError(t, err)
	must.Eq(t, int64(buf.Len()), n)
	return buf.Bytes()
}

func TestWrite_RecordsNomadKnows(t *testing.T) {
	f := newWriteFixture(t)
	recs := decodeStream(t, writeStream(t, f.store))

	counts := map[SnapshotType]int{}
	order := []SnapshotType{}
	for _, r := range recs {
		must.True(t, r.Type.Known(), must.Sprintf("record type %d is not one Nomad 2.0 restores", r.Type))
		if counts[r.Type] == 0 {
			order = append(order, r.Type)
		}
		counts[r.Type]++
	}
	// Jobs: batch, nightly, its child, hourly, render, queued; versions:
	// batch twice.
	must.Eq(t, 6, counts[JobSnapshot])
	must.Eq(t, 7, counts[JobVersionSnapshot])
	must.Eq(t, 1, counts[NodeSnapshot])
	must.Eq(t, 1, counts[AllocSnapshot])
	must.Eq(t, 3, counts[EvalSnapshot])
	// nightly's launch, and hourly's registration as Nomad records it.
	must.Eq(t, 2, counts[PeriodicLaunchSnapshot])
	must.Eq(t, 1, counts[ACLPolicySnapshot])
	must.Eq(t, 1, counts[ACLTokenSnapshot])
	must.Eq(t, 1, counts[ACLRoleSnapshot])
	must.Eq(t, 1, counts[ACLAuthMethodSnapshot])
	must.Eq(t, 1, counts[ACLBindingRuleSnapshot])
	must.Eq(t, 1, counts[ScalingEventsSnapshot])
	must.Eq(t, 1, counts[VariablesSnapshot])
	must.Eq(t, 1, counts[RootKeySnapshot])
	must.Eq(t, 1, counts[SchedulerConfigSnapshot])
	must.Eq(t, 2, counts[NamespaceSnapshot]) // default and team
	must.Eq(t, 3, counts[NodePoolSnapshot])  // all, default and gpu
	must.Positive(t, counts[IndexSnapshot])

	// Nomad's Persist order, for the types present.
	persistOrder := []SnapshotType{IndexSnapshot, NodeSnapshot, NodePoolSnapshot, JobSnapshot, EvalSnapshot,
		AllocSnapshot, PeriodicLaunchSnapshot, JobSummarySnapshot, JobVersionSnapshot, ScalingEventsSnapshot,
		ACLPolicySnapshot, ACLTokenSnapshot, NamespaceSnapshot, SchedulerConfigSnapshot, ServiceRegistrationSnapshot,
		VariablesSnapshot, RootKeySnapshot, ACLRoleSnapshot, ACLAuthMethodSnapshot, ACLBindingRuleSnapshot,
		JobSubmissionSnapshot}
	var want []SnapshotType
	for _, typ := range persistOrder {
		if counts[typ] > 0 {
			want = append(want, typ)
		}
	}
	must.Eq(t, want, order)

	launches := map[string]time.Time{}
	for _, r := range recs {
		switch r.Type {
		case JobSnapshot:
			if r.Obj["ID"] == "render" {
				pj := r.Obj["ParameterizedJob"].(map[string]any)
				must.Eq(t, "required", pj["Payload"])
			}
			if r.Obj["ID"] == "nightly" {
				p := r.Obj["Periodic"].(map[string]any)
				must.Eq(t, "0 3 * * *", p["Spec"])
			}
			// Nomad ages jobs by their submit time: never left at zero.
			must.Positive(t, r.Obj["SubmitTime"].(int64))
			if r.Obj["ID"] == "batch" {
				tg := r.Obj["TaskGroups"].([]any)[0].(map[string]any)
				must.Eq(t, int64(10*time.Minute), tg["MaxRunDuration"].(int64))
			}
		case PeriodicLaunchSnapshot:
			// Nomad's Launch is a time.Time: its binary form, not a number.
			var l struct {
				ID     string
				Launch time.Time
			}
			must.NoError(t, codec.NewDecoderBytes(r.Raw, Handle).Decode(&l))
			launches[l.ID] = l.Launch
		case ACLAuthMethodSnapshot:
			// Nomad's OIDCClientAssertion is an object, not nomadq's JSON.
			cfg := r.Obj["Config"].(map[string]any)
			must.Eq(t, "https://idp.example/jwks", cfg["JWKSURL"])
			ca := cfg["OIDCClientAssertion"].(map[string]any)
			must.Eq(t, "nomad", ca["KeySource"])
		case SchedulerConfigSnapshot:
			must.Eq(t, "binpack", r.Obj["SchedulerAlgorithm"])
			bq := r.Obj["BatchQueue"].(map[string]any)
			must.Eq(t, true, bq["Enabled"])
			x := r.Obj[NomadqExtrasField].(map[string]any)
			ap := x["AutopilotConfig"].(map[string]any)
			must.Eq(t, int64(321), ap["MaxTrailingLogs"].(int64))
			must.Len(t, 1, x["BatchQueueUsageResets"].([]any))
			must.Len(t, 1, x["BatchQueue"].([]any))
			must.Len(t, 1, x["BatchQueueControls"].([]any))
		}
	}
	must.MapLen(t, 2, launches)
	must.True(t, launches["nightly"].Equal(time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)))
	must.True(t, launches["hourly"].Equal(time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)))
}

// nomadWrappedKey and nomadRootKey are the fields of Nomad's RootKey
// record a Nomad server reads to unwrap a key.
type nomadWrappedKey struct {
	Provider                 string
	KeyEncryptionKey         []byte
	WrappedDataEncryptionKey *wrapping.BlobInfo
	WrappedRSAKey            *wrapping.BlobInfo
}

type nomadRootKey struct {
	KeyID       string
	Algorithm   string
	State       string
	CreateTime  int64
	WrappedKeys []*nomadWrappedKey
}

type nomadVariable struct {
	Namespace string
	Path      string
	Data      []byte
	KeyID     string
}

func TestWrite_RootKeyAndVariableInNomadsScheme(t *testing.T) {
	f := newWriteFixture(t)
	recs := decodeStream(t, writeStream(t, f.store))

	var key nomadRootKey
	var variable nomadVariable
	for _, r := range recs {
		switch r.Type {
		case RootKeySnapshot:
			must.NoError(t, codec.NewDecoderBytes(r.Raw, Handle).Decode(&key))
		case VariablesSnapshot:
			must.NoError(t, codec.NewDecoderBytes(r.Raw, Handle).Decode(&variable))
		}
	}
	must.Eq(t, f.rootKey.KeyID, key.KeyID)
	must.Eq(t, "aes256-gcm", key.Algorithm)
	must.Eq(t, "active", key.State)
	must.Len(t, 1, key.WrappedKeys)
	wk := key.WrappedKeys[0]
	must.Eq(t, "aead", wk.Provider)
	must.Len(t, 32, wk.KeyEncryptionKey)

	// Unwrap as a Nomad server does: the aead wrapper keyed with the KEK.
	kw, err := newAEADWrapper(key.KeyID, wk.KeyEncryptionKey)
	must.NoError(t, err)
	dek, err := kw.Decrypt(context.Background(), wk.WrappedDataEncryptionKey)
	must.NoError(t, err)
	must.Eq(t, f.rootKey.Key, dek)
	rsaDER, err := kw.Decrypt(context.Background(), wk.WrappedRSAKey)
	must.NoError(t, err)
	_, err = x509.ParsePKCS1PrivateKey(rsaDER)
	must.NoError(t, err)

	// Decrypt the variable as Nomad does: the DEK, the key ID as AAD.
	must.Eq(t, "team", variable.Namespace)
	must.Eq(t, f.varPath, variable.Path)
	must.Eq(t, key.KeyID, variable.KeyID)
	vw, err := newAEADWrapper(key.KeyID, dek)
	must.NoError(t, err)
	plain, err := vw.Decrypt(context.Background(), &wrapping.BlobInfo{Ciphertext: variable.Data}, wrapping.WithAad([]byte(key.KeyID)))
	must.NoError(t, err)
	var items structs.VariableItems
	must.NoError(t, json.Unmarshal(plain, &items))
	must.Eq(t, f.items, items)
}

func TestWrite_EmptyState(t *testing.T) {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	recs := decodeStream(t, writeStream(t, st))
	for _, r := range recs {
		must.True(t, r.Type.Known())
	}
}

// TestWrite_AEADWrapperReadsNomadsKeys checks that the go-kms-wrapping
// release Write wraps keys with unwraps the keys real Nomad 2.0.6 wrote
// (Nomad builds with a fork of it) and opens its variables as Write seals
// them: the fixture's root key, and the variable sealed with it.
func TestWrite_AEADWrapperReadsNomadsKeys(t *testing.T) {
	f, err := os.Open("testdata/nomad-2.0.6/full.snap")
	must.NoError(t, err)
	defer f.Close()
	var stream bytes.Buffer
	_, err = snapshot.Read(f, &stream)
	must.NoError(t, err)

	var key nomadRootKey
	var variables []nomadVariable
	for _, r := range decodeStream(t, stream.Bytes()) {
		switch r.Type {
		case RootKeySnapshot:
			must.NoError(t, codec.NewDecoderBytes(r.Raw, Handle).Decode(&key))
		case VariablesSnapshot:
			var v nomadVariable
			must.NoError(t, codec.NewDecoderBytes(r.Raw, Handle).Decode(&v))
			variables = append(variables, v)
		}
	}
	must.Eq(t, "ce97a4b7-e1a5-8a39-009e-9b3f390dae01", key.KeyID)
	must.Len(t, 1, key.WrappedKeys)
	wk := key.WrappedKeys[0]
	kw, err := newAEADWrapper(key.KeyID, wk.KeyEncryptionKey)
	must.NoError(t, err)
	dek, err := kw.Decrypt(context.Background(), wk.WrappedDataEncryptionKey)
	must.NoError(t, err)
	must.Len(t, 32, dek)
	rsaDER, err := kw.Decrypt(context.Background(), wk.WrappedRSAKey)
	must.NoError(t, err)
	_, err = x509.ParsePKCS1PrivateKey(rsaDER)
	must.NoError(t, err)

	vw, err := newAEADWrapper(key.KeyID, dek)
	must.NoError(t, err)
	found := false
	for _, v := range variables {
		if v.Namespace != "default" || v.Path != "nomad/jobs/sleepy" {
			continue
		}
		found = true
		plain, err := vw.Decrypt(context.Background(), &wrapping.BlobInfo{Ciphertext: v.Data}, wrapping.WithAad([]byte(v.KeyID)))
		must.NoError(t, err)
		var items structs.VariableItems
		must.NoError(t, json.Unmarshal(plain, &items))
		must.Eq(t, structs.VariableItems{"user": "alice", "password": "s3cret"}, items)
	}
	must.True(t, found)
}

// TestWrite_ReadRestoresEqualState writes the fixture's state and reads
// it back: a snapshot our servers save restores into ours whole, the
// nomadq-only state included.
func TestWrite_ReadRestoresEqualState(t *testing.T) {
	f := newWriteFixture(t)
	restored, err := Read(bytes.NewReader(writeStream(t, f.store)))
	must.NoError(t, err)
	must.SliceEmpty(t, restored.Skipped)
	got := restored.State

	want, err := f.store.Snapshot()
	must.NoError(t, err)

	wantJobs, err := want.Jobs(nil)
	must.NoError(t, err)
	gotJobs, err := got.Jobs(nil)
	must.NoError(t, err)
	must.Len(t, len(wantJobs), gotJobs)
	for i, w := range wantJobs {
		g := gotJobs[i]
		// A job without a submit time gets the snapshot's.
		must.Positive(t, g.SubmitTime)
		if w.SubmitTime == 0 {
			w = withSubmitTime(w, time.Unix(0, g.SubmitTime))
		}
		must.Eq(t, w, g, must.Sprintf("job %s/%s", w.Namespace, w.ID))
		wv, err := want.JobVersionsByID(nil, w.Namespace, w.ID)
		must.NoError(t, err)
		gv, err := got.JobVersionsByID(nil, w.Namespace, w.ID)
		must.NoError(t, err)
		must.Len(t, len(wv), gv)
	}
	batch, err := got.JobByID(nil, "team", "batch")
	must.NoError(t, err)
	must.Eq(t, 10*time.Minute, *batch.TaskGroups[0].MaxRunDuration)

	same := func(name string, read func(*state.StateSnapshot) (any, error)) {
		t.Helper()
		gs, err := got.Snapshot()
		must.NoError(t, err)
		w, err := read(want)
		must.NoError(t, err)
		g, err := read(gs)
		must.NoError(t, err)
		must.Eq(t, w, g, must.Sprintf("%s differ", name))
	}
	same("namespaces", func(s *state.StateSnapshot) (any, error) { return s.NamespacesByNamePrefix(nil, "") })
	same("node pools", func(s *state.StateSnapshot) (any, error) { return s.NodePoolsByNamePrefix(nil, "") })
	same("nodes", func(s *state.StateSnapshot) (any, error) { return s.Nodes(nil) })
	same("evals", func(s *state.StateSnapshot) (any, error) { return s.Evals(nil) })
	same("allocs", func(s *state.StateSnapshot) (any, error) { return s.Allocs(nil) })
	same("job summaries", func(s *state.StateSnapshot) (any, error) { return s.JobSummaries(nil) })
	// hourly's registration comes back as its first launch, the anchor
	// nomadq took for it anyway.
	gotLaunch, err := got.PeriodicLaunchByID(nil, structs.DefaultNamespace, "hourly")
	must.NoError(t, err)
	must.NotNil(t, gotLaunch)
	must.Eq(t, time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC).UnixNano(), gotLaunch.Launch)
	nightly, err := want.PeriodicLaunchByID(nil, structs.DefaultNamespace, "nightly")
	must.NoError(t, err)
	gotNightly, err := got.PeriodicLaunchByID(nil, structs.DefaultNamespace, "nightly")
	must.NoError(t, err)
	must.Eq(t, nightly, gotNightly)
	same("ACL policies", func(s *state.StateSnapshot) (any, error) { return s.ACLPolicies(nil, "") })
	same("ACL tokens", func(s *state.StateSnapshot) (any, error) { return s.ACLTokens(nil, "", false) })
	same("ACL roles", func(s *state.StateSnapshot) (any, error) { return s.ACLRoles(nil, "") })
	same("ACL auth methods", func(s *state.StateSnapshot) (any, error) { return s.ACLAuthMethods(nil) })
	same("ACL binding rules", func(s *state.StateSnapshot) (any, error) { return s.ACLBindingRules(nil, "") })
	same("scaling events", func(s *state.StateSnapshot) (any, error) {
		events, _, err := s.ScalingEventsByJob(nil, "team", "batch")
		return events, err
	})
	same("root keys", func(s *state.StateSnapshot) (any, error) { return s.RootKeys(nil) })
	same("scheduler config", func(s *state.StateSnapshot) (any, error) { _, c, err := s.SchedulerConfig(); return c, err })
	same("autopilot config", func(s *state.StateSnapshot) (any, error) { _, c, err := s.AutopilotConfig(nil); return c, err })
	same("batch queue", func(s *state.StateSnapshot) (any, error) { return s.BatchQueueEntries(nil) })
	same("batch queue stats", func(s *state.StateSnapshot) (any, error) { return s.BatchQueueStats(nil) })
	same("batch queue controls", func(s *state.StateSnapshot) (any, error) { return s.BatchQueueControls(nil) })
	same("batch queue usage resets", func(s *state.StateSnapshot) (any, error) { return s.BatchQueueUsageResets(nil) })
	same("latest index", func(s *state.StateSnapshot) (any, error) { return s.LatestIndex() })

	v, err := got.VariableByPath(nil, "team", f.varPath)
	must.NoError(t, err)
	must.NotNil(t, v)
	dec, err := keyring.DecryptVariable(got, v)
	must.NoError(t, err)
	must.Eq(t, f.items, dec.Items)
}
