package keyring

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// keyedSnapshot returns a state snapshot holding one active root key.
func keyedSnapshot(t testing.TB) (*state.StateSnapshot, *structs.RootKey) {
	t.Helper()
	st, err := state.NewStateStore()
	must.NoError(t, err)
	key, err := NewRootKey(time.Now())
	must.NoError(t, err)
	must.NoError(t, st.UpsertRootKey(1, key))
	snap, err := st.Snapshot()
	must.NoError(t, err)
	return snap, key
}

func TestSignPlacements_NewAndStoredAllocs(t *testing.T) {
	snap, key := keyedSnapshot(t)
	k := New()
	job := identityJob("many")
	job.TaskGroups[0].Tasks = append(job.TaskGroups[0].Tasks, &structs.Task{Name: "side", Driver: "mock_driver",
		Templates: []*structs.Template{{EmbeddedTmpl: "x", DestPath: "local/x"}}})
	plan := &structs.Plan{Job: job}

	stored := &structs.Allocation{
		ID: structs.GenerateUUID(), Namespace: "default", TaskGroup: "work",
		SignedIdentities: map[string]string{"main": "stored-token"}, SigningKeyID: "old-key",
	}
	var placements []Placement
	for i := range 16 {
		a := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: "default", TaskGroup: "work"}
		p := Placement{Planned: a, Write: a.Copy()}
		if i == 0 {
			// An in-place update: the scheduler's copy shares the stored map.
			a = &structs.Allocation{ID: stored.ID, Namespace: "default", TaskGroup: "work", SignedIdentities: stored.SignedIdentities}
			p = Placement{Planned: a, Write: &structs.Allocation{ID: a.ID, Namespace: "default", TaskGroup: "work", SignedIdentities: stored.SignedIdentities}, Existing: stored}
		}
		placements = append(placements, p)
	}
	must.NoError(t, k.SignPlacements(snap, plan, placements))

	must.Eq(t, map[string]string{"main": "stored-token"}, stored.SignedIdentities, must.Sprint("the stored alloc is never written into"))
	must.Eq(t, "stored-token", placements[0].Write.SignedIdentities["main"], must.Sprint("a stored identity is kept"))
	for i, p := range placements {
		must.MapLen(t, 2, p.Write.SignedIdentities, must.Sprintf("placement %d", i))
		must.Eq(t, key.KeyID, p.Write.SigningKeyID)
		for task, token := range p.Write.SignedIdentities {
			if i == 0 && task == "main" {
				continue
			}
			tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
			must.NoError(t, err)
			var claims structs.WorkloadIdentityClaims
			priv, err := x509.ParsePKCS1PrivateKey(key.RSAKey)
			must.NoError(t, err)
			must.NoError(t, tok.Claims(&priv.PublicKey, &claims))
			must.Eq(t, structs.WorkloadIdentityClaims{Namespace: "default", JobID: "many", AllocationID: p.Write.ID, TaskName: task}, claims)
		}
	}
}

func TestSignPlacements_NoKeyFailsThePlan(t *testing.T) {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	snap, err := st.Snapshot()
	must.NoError(t, err)
	k := New()
	a := &structs.Allocation{ID: structs.GenerateUUID(), TaskGroup: "work"}
	err = k.SignPlacements(snap, &structs.Plan{Job: identityJob("x")}, []Placement{{Planned: a, Write: a.Copy()}})
	must.ErrorIs(t, err, ErrNoActiveRootKey)
}

// TestSignPlacements_OnlyTasksThatUseOne: a task with neither an identity
// block that exposes it nor a template is signed nothing, so a plan of
// such tasks needs no root key; in a mixed group only the task that can
// read its identity gets one.
func TestSignPlacements_OnlyTasksThatUseOne(t *testing.T) {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	keyless, err := st.Snapshot()
	must.NoError(t, err)
	k := New()
	a := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: "default", TaskGroup: "work"}
	w := a.Copy()
	must.NoError(t, k.SignPlacements(keyless, &structs.Plan{Job: mock.Job("plain")}, []Placement{{Planned: a, Write: w}}))
	must.MapEmpty(t, w.SignedIdentities)
	plan := &structs.Plan{Job: mock.Job("plain"), NodeAllocation: map[string][]*structs.Allocation{"n": {a}}}
	k.Presign(keyless, plan)
	must.MapEmpty(t, a.SignedIdentities)

	snap, _ := keyedSnapshot(t)
	job := mock.Job("mixed")
	hidden := &structs.Task{Name: "hidden", Driver: "mock_driver", Identity: &structs.WorkloadIdentity{Name: "default"}}
	job.TaskGroups[0].Tasks = append(job.TaskGroups[0].Tasks, hidden,
		&structs.Task{Name: "file", Driver: "mock_driver", Identity: &structs.WorkloadIdentity{File: true}})
	b := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: "default", TaskGroup: "work"}
	w = b.Copy()
	must.NoError(t, k.SignPlacements(snap, &structs.Plan{Job: job}, []Placement{{Planned: b, Write: w}}))
	must.MapLen(t, 1, w.SignedIdentities)
	must.MapContainsKey(t, w.SignedIdentities, "file")
}

// identityJob is mockJob with its task's identity in the env.
func identityJob(id string) *structs.Job {
	job := mock.Job(id)
	job.TaskGroups[0].Tasks[0].Identity = &structs.WorkloadIdentity{Env: true}
	return job
}

// BenchmarkSignPlacements measures the plan applier's signing cost for a
// plan of 100 one-task placements.
func BenchmarkSignPlacements(b *testing.B) {
	snap, _ := keyedSnapshot(b)
	k := New()
	plan := &structs.Plan{Job: identityJob("bench")}
	for b.Loop() {
		placements := make([]Placement, 100)
		for i := range placements {
			a := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: "default", TaskGroup: "work"}
			placements[i] = Placement{Planned: a, Write: a.Copy()}
		}
		if err := k.SignPlacements(snap, plan, placements); err != nil {
			b.Fatal(err)
		}
	}
}

func TestNextPublication(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	key := func(id string, st structs.RootKeyState, publish time.Time) *structs.RootKey {
		k := &structs.RootKey{KeyID: id, State: st}
		if !publish.IsZero() {
			k.PublishTime = publish.UnixNano()
		}
		return k
	}
	cases := []struct {
		name     string
		keys     []*structs.RootKey
		wantID   string
		wantWait time.Duration
	}{
		{"empty keyring", nil, "", 0},
		{"no prepublished key", []*structs.RootKey{key("a", structs.RootKeyStateActive, time.Time{}), key("b", structs.RootKeyStateInactive, time.Time{})}, "", 0},
		{"due later", []*structs.RootKey{key("a", structs.RootKeyStateActive, time.Time{}), key("b", structs.RootKeyStatePrepublished, now.Add(time.Hour))}, "b", time.Hour},
		{"overdue", []*structs.RootKey{key("b", structs.RootKeyStatePrepublished, now.Add(-time.Minute))}, "b", -time.Minute},
		{"earliest first", []*structs.RootKey{
			key("c", structs.RootKeyStatePrepublished, now.Add(2*time.Hour)),
			key("d", structs.RootKeyStatePrepublished, now.Add(time.Hour)),
		}, "d", time.Hour},
		{"a tie goes to the lower ID", []*structs.RootKey{
			key("f", structs.RootKeyStatePrepublished, now.Add(time.Hour)),
			key("e", structs.RootKeyStatePrepublished, now.Add(time.Hour)),
		}, "e", time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, wait := NextPublication(tc.keys, now)
			if tc.wantID == "" {
				must.Nil(t, got)
				return
			}
			must.Eq(t, tc.wantID, got.KeyID)
			must.Eq(t, tc.wantWait, wait)
		})
	}
}

// TestPresign_SignsNewPlacementsOnly: the worker signs the identities
// of a plan's new placements before the plan reaches the applier, and
// leaves an in-place update of a stored alloc to keep what it has.
func TestPresign_SignsNewPlacementsOnly(t *testing.T) {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	key, err := NewRootKey(time.Now())
	must.NoError(t, err)
	must.NoError(t, st.UpsertRootKey(1, key))
	job := identityJob("presign")
	must.NoError(t, st.UpsertJob(2, job))
	stored := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: "default", JobID: job.ID, Job: job,
		TaskGroup: "work", NodeID: structs.GenerateUUID(), DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus: structs.AllocClientStatusPending, SignedIdentities: map[string]string{"main": "stored-token"}}
	must.NoError(t, st.UpsertAllocs(3, []*structs.Allocation{stored}))
	snap, err := st.Snapshot()
	must.NoError(t, err)

	fresh := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: "default", JobID: job.ID, TaskGroup: "work"}
	update := &structs.Allocation{ID: stored.ID, Namespace: "default", JobID: job.ID, TaskGroup: "work"}
	plan := &structs.Plan{Job: job, NodeAllocation: map[string][]*structs.Allocation{stored.NodeID: {fresh, update}}}
	k := New()
	k.Presign(snap, plan)

	must.MapLen(t, 1, fresh.SignedIdentities)
	must.Eq(t, key.KeyID, fresh.SigningKeyID)
	must.MapEmpty(t, update.SignedIdentities, must.Sprint("an update is left for the applier to carry over"))

	// The applier keeps the worker's token rather than signing again.
	token := fresh.SignedIdentities["main"]
	write := fresh.Copy()
	must.NoError(t, k.SignPlacements(snap, plan, []Placement{{Planned: fresh, Write: write}}))
	must.Eq(t, token, write.SignedIdentities["main"])
}

// TestPresign_WithoutKeyLeavesItToTheApplier: with no root key yet the
// worker signs nothing and the applier reports the error.
func TestPresign_WithoutKeyLeavesItToTheApplier(t *testing.T) {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	snap, err := st.Snapshot()
	must.NoError(t, err)
	a := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: "default", TaskGroup: "work"}
	plan := &structs.Plan{Job: identityJob("x"), NodeAllocation: map[string][]*structs.Allocation{"n": {a}}}
	k := New()
	k.Presign(snap, plan)
	must.MapEmpty(t, a.SignedIdentities)
	must.ErrorIs(t, k.SignPlacements(snap, plan, []Placement{{Planned: a, Write: a.Copy()}}), ErrNoActiveRootKey)
}
