package state

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// populate writes at least one row to every table, with the nested values
// (times, pointers, maps, slices) a codec is likely to get wrong.
func populate(t testing.TB, s *StateStore) {
	t.Helper()
	node := mockNode()
	node.Meta = map[string]string{"rack": "r1"}
	node.ReservedResources = &structs.NodeReservedResources{Cpu: structs.NodeReservedCpuResources{CpuShares: 100}}
	must.NoError(t, s.UpsertNode(1, node))
	must.NoError(t, s.UpdateNodeStatus(2, node.ID, structs.NodeStatusReady, 2000,
		&structs.NodeEvent{Message: "registered", Subsystem: "Cluster", Timestamp: time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC), Details: map[string]string{"k": "v"}}))

	job := mockBatchJob("batch")
	job.Meta = map[string]string{"owner": "ops"}
	job.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}}
	job.TaskGroups[0].Tasks[0].Config = map[string]any{
		"command": "/bin/sh",
		"args":    []any{"-c", "echo hi"},
		"nested":  map[string]any{"debug": true, "mode": "fast"},
	}
	eval := mockEval(job, structs.EvalStatusPending)
	eval.WaitUntil = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	must.NoError(t, s.UpsertJobWithSubmission(3, job, &structs.JobSubmission{Source: "job \"batch\" {}", Format: "hcl2", VariableFlags: map[string]string{"x": "1"}}, eval))
	changed := mockBatchJob("batch")
	changed.Priority = 60
	must.NoError(t, s.UpsertJob(4, changed))

	parent := mockPeriodicJob("cron")
	must.NoError(t, s.UpsertJob(5, parent))
	must.NoError(t, s.UpsertPeriodicLaunch(6, mockChildJob(parent, "periodic-1"), nil,
		&structs.PeriodicLaunch{ID: parent.ID, Namespace: parent.Namespace, Launch: 1e9}))

	alloc := mockAlloc(changed, node.ID, eval.ID, structs.AllocClientStatusPending)
	done := eval.Copy()
	done.Status = structs.EvalStatusComplete
	done.QueuedAllocations = map[string]int{"web": 1}
	blocked := mockEval(changed, structs.EvalStatusBlocked)
	blocked.FailedTGAllocs = map[string]*structs.AllocMetric{"web": {
		NodesEvaluated: 1, NodesExhausted: 1, DimensionExhausted: map[string]int{"memory": 1},
		ScoreMetaData: []*structs.NodeScoreMeta{{NodeID: node.ID, Scores: structs.NodeScores{{Name: "binpack", Score: 0.5}}, NormScore: 0.5}},
	}}
	must.NoError(t, s.UpsertPlanResults(7, &structs.ApplyPlanResultsRequest{
		AllocsUpdated: []*structs.Allocation{alloc},
		Job:           changed,
		EvalID:        eval.ID,
		Evals:         []*structs.Evaluation{done, blocked},
	}))
	update := clientUpdate(alloc, structs.AllocClientStatusRunning)
	update.TaskStates["server"].StartedAt = time.Date(2025, 3, 4, 5, 6, 8, 0, time.UTC)
	update.TaskStates["server"].Events = []*structs.TaskEvent{{Type: structs.TaskStarted, Time: 12345, Details: map[string]string{"pid": "42"}}}
	must.NoError(t, s.UpdateAllocsFromClient(8, []*structs.Allocation{update}))
	must.NoError(t, s.UpsertServiceRegistrations(8, []*structs.ServiceRegistration{{ID: "_nomad-task-" + alloc.ID + "-group-web-web-http",
		ServiceName: "web", Namespace: "default", NodeID: node.ID, Datacenter: "dc1", JobID: "batch", AllocID: alloc.ID,
		Tags: []string{"a"}, Address: "10.0.0.1", Port: 8080}}))

	// A changed default namespace must come back changed, not as the
	// built-in a new store starts with.
	must.NoError(t, s.UpsertNamespaces(9, []*structs.Namespace{
		{Name: "default", Description: "shared", Meta: map[string]string{"batch_queue_weight": "2"}},
		{Name: "prod", Meta: map[string]string{"team": "ops"}, Capabilities: &structs.NamespaceCapabilities{DisabledTaskDrivers: []string{"docker"}}},
	}))
	must.NoError(t, s.UpsertNodePools(9, []*structs.NodePool{{Name: "gpu", Description: "GPU nodes", Meta: map[string]string{"vendor": "x"}, NodeIdentityTTL: time.Hour}}))

	cfg := structs.DefaultSchedulerConfiguration()
	cfg.BatchQueue.Enabled = true
	_, err := s.SchedulerSetConfig(9, cfg)
	must.NoError(t, err)

	must.NoError(t, s.UpsertScalingEvent(9, &structs.ScalingEventRequest{Namespace: "default", JobID: "batch", TaskGroup: "web",
		ScalingEvent: &structs.ScalingEvent{Time: 1e9, Count: new(int64(2)), Message: "more", Meta: map[string]any{"k": "v"}, EvalID: new("e")}}))

	must.NoError(t, s.UpsertRootKey(10, mockRootKey(structs.RootKeyStateActive)))
	must.NoError(t, s.UpsertACLPolicies(10, []*structs.ACLPolicy{{Name: "readonly", Description: "read", Rules: `namespace "default" { policy = "read" }`,
		JobACL: &structs.JobACL{Namespace: "default", JobID: "batch"}}}))
	must.NoError(t, s.UpsertACLRoles(10, []*structs.ACLRole{{ID: "role-1", Name: "readers", Policies: []*structs.ACLRolePolicyLink{{Name: "readonly"}}}}))
	expires := time.Unix(2e9, 0).UTC()
	must.NoError(t, s.BootstrapACLTokens(10, 0, &structs.ACLToken{AccessorID: "4b9a4d4c-5a0e-4d7b-9d5e-1f2a3b4c5d6e", SecretID: "s-1",
		Name: "Bootstrap Token", Type: structs.ACLManagementToken, CreateTime: time.Unix(1e9, 0).UTC()}))
	must.NoError(t, s.UpsertACLTokens(10, []*structs.ACLToken{{AccessorID: "5b9a4d4c-5a0e-4d7b-9d5e-1f2a3b4c5d6e", SecretID: "s-2",
		Type: structs.ACLClientToken, Policies: []string{"readonly"}, Roles: []*structs.ACLTokenRoleLink{{ID: "role-1", Name: "readers"}},
		ExpirationTime: &expires, ExpirationTTL: time.Hour, CreateTime: time.Unix(1e9, 0).UTC()}}))
	must.NoError(t, s.UpsertOneTimeToken(10, &structs.OneTimeToken{OneTimeSecretID: "ott-1", AccessorID: "5b9a4d4c-5a0e-4d7b-9d5e-1f2a3b4c5d6e", ExpiresAt: expires}))
	must.NoError(t, s.UpsertACLAuthMethods(10, []*structs.ACLAuthMethod{{Name: "ci", Type: structs.ACLAuthMethodTypeJWT,
		TokenLocality: "local", MaxTokenTTL: time.Hour, Default: true, CreateTime: time.Unix(1e9, 0).UTC(),
		Config: &structs.ACLAuthMethodConfig{JWKSURL: "https://keys.example", BoundAudiences: []string{"nomad"},
			ClockSkewLeeway: time.Minute, ClaimMappings: map[string]string{"sub": "sub"}}}}))
	must.NoError(t, s.UpsertACLBindingRules(10, []*structs.ACLBindingRule{{ID: "rule-1", AuthMethod: "ci",
		Selector: `value.sub == "x"`, BindType: structs.ACLBindingRuleBindTypeRole, BindName: "readers"}}))
	_, err = s.ApplyVariable(10, structs.VarOpLockAcquire, &structs.VariableEncrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: "prod", Path: "app/db", CreateTime: 1e9, ModifyTime: 1e9,
			Lock: &structs.VariableLock{ID: "lock-1", TTL: time.Minute, LockDelay: time.Second}},
		Data: []byte("sealed"), KeyID: "key-1",
	})
	must.NoError(t, err)
	_, err = s.AutopilotSetConfig(9, structs.DefaultAutopilotConfig(), false, 0)
	must.NoError(t, err)
}

func TestSnapshot_RoundTrip(t *testing.T) {
	s := testStore(t)
	populate(t, s)
	populateBatchQueue(t, s)

	snap, err := s.Snapshot()
	must.NoError(t, err)
	var buf bytes.Buffer
	n, err := snap.WriteTo(&buf)
	must.NoError(t, err)
	must.Eq(t, int64(buf.Len()), n)

	restored, err := RestoreFrom(&buf)
	must.NoError(t, err)

	want := dumpState(t, &s.reader)
	for _, tbl := range snapshotTables {
		must.SliceNotEmpty(t, want[tbl.table], must.Sprintf("populate must fill table %s", tbl.table))
	}
	must.Eq(t, want, dumpState(t, &restored.reader))
	must.Eq(t, indexTable(t, s), indexTable(t, restored))
	latest, err := restored.LatestIndex()
	must.NoError(t, err)
	must.Eq(t, 10, latest)

	// The restored store keeps working from where the old one stopped.
	must.NoError(t, restored.UpdateAllocsFromClient(11, []*structs.Allocation{clientUpdate(want[TableAllocs][0].(*structs.Allocation), structs.AllocClientStatusComplete)}))
	job, err := restored.JobByID(nil, "default", "batch")
	must.NoError(t, err)
	must.Eq(t, structs.JobStatusPending, job.Status, must.Sprint("the blocked eval keeps the job pending"))
	must.Eq(t, structs.TaskGroupSummary{Complete: 1, Queued: 1}, groupSummary(t, restored, job, "web"))
}

func TestSnapshot_IsConsistent(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertJob(1, mockJob("web")))
	snap, err := s.Snapshot()
	must.NoError(t, err)

	must.NoError(t, s.UpsertJob(2, mockJob("api")))
	must.NoError(t, s.DeleteJob(3, "default", "web"))

	jobs, err := snap.Jobs(nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, jobs)
	must.Eq(t, "web", jobs[0].ID)
	idx, err := snap.Index(TableJobs)
	must.NoError(t, err)
	must.Eq(t, 1, idx)

	var buf bytes.Buffer
	_, err = snap.WriteTo(&buf)
	must.NoError(t, err)
	restored, err := RestoreFrom(&buf)
	must.NoError(t, err)
	must.Eq(t, dumpState(t, &snap.reader), dumpState(t, &restored.reader))
}

func TestSnapshot_AllocsShareTheirJob(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	must.NoError(t, s.UpsertAllocs(2, benchmarkAllocs(job, 3)))
	other := mockJob("api")
	must.NoError(t, s.UpsertJob(3, other))
	must.NoError(t, s.UpsertAllocs(4, benchmarkAllocs(other, 2)))

	restored := restoreCopy(t, s)
	must.Eq(t, dumpState(t, &s.reader), dumpState(t, &restored.reader))

	jobs := make(map[string]map[*structs.Job]bool)
	allocs, err := restored.Allocs(nil)
	must.NoError(t, err)
	for _, a := range allocs {
		if jobs[a.JobID] == nil {
			jobs[a.JobID] = make(map[*structs.Job]bool)
		}
		jobs[a.JobID][a.Job] = true
	}
	must.MapLen(t, 1, jobs["web"], must.Sprint("the allocs of one job version share one Job"))
	must.MapLen(t, 1, jobs["api"])
}

// TestSnapshot_JobRowsShareTheirJob: a Job the live store shares between
// a job's row, its version row and its allocs is written once, and a
// restore shares it between the same rows.
func TestSnapshot_JobRowsShareTheirJob(t *testing.T) {
	s := testStore(t)
	job := mockBatchJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	stored, err := s.JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.NoError(t, s.UpsertAllocs(2, benchmarkAllocs(stored, 2)))
	// A second job whose row is still the Job its allocs hold.
	other := mockBatchJob("api")
	must.NoError(t, s.UpsertJob(3, other))

	// rows returns the job's row, its version row and its allocs' Jobs.
	rows := func(st *StateStore, id string) []*structs.Job {
		t.Helper()
		row, err := st.JobByID(nil, "default", id)
		must.NoError(t, err)
		version, err := st.JobByIDAndVersion(nil, "default", id, row.Version)
		must.NoError(t, err)
		allocs, err := st.AllocsByJob(nil, "default", id, false)
		must.NoError(t, err)
		out := []*structs.Job{row, version}
		for _, a := range allocs {
			out = append(out, a.Job)
		}
		return out
	}
	distinct := func(jobs []*structs.Job) int {
		seen := map[*structs.Job]bool{}
		for _, j := range jobs {
			seen[j] = true
		}
		return len(seen)
	}
	sharing := func(jobs []*structs.Job) [][]bool {
		out := make([][]bool, len(jobs))
		for i := range jobs {
			for j := range jobs {
				out[i] = append(out[i], jobs[i] == jobs[j])
			}
		}
		return out
	}

	snap, err := s.Snapshot()
	must.NoError(t, err)
	var buf bytes.Buffer
	_, err = snap.WriteTo(&buf)
	must.NoError(t, err)
	stats, _, _, err := SnapshotStats(bytes.NewReader(buf.Bytes()))
	must.NoError(t, err)
	written := 0
	for _, st := range stats {
		if st.Name == "SharedJobSnapshot" {
			written = st.Count
		}
	}
	must.Eq(t, distinct(rows(s, "web"))+distinct(rows(s, "api")), written, must.Sprint("each distinct Job is written once"))
	must.Eq(t, 1, distinct(rows(s, "api")))

	restored, err := RestoreFrom(&buf)
	must.NoError(t, err)
	must.Eq(t, dumpState(t, &s.reader), dumpState(t, &restored.reader))
	for _, id := range []string{"web", "api"} {
		must.Eq(t, sharing(rows(s, id)), sharing(rows(restored, id)), must.Sprintf("job %s: the same rows share a Job", id))
	}
	// web's row is a copy with another status; it shares its task groups
	// with the version row in the live store, and after a restore.
	for _, st := range []*StateStore{s, restored} {
		web := rows(st, "web")
		must.NotEq(t, web[0].Status, web[1].Status)
		must.True(t, unsafe.SliceData(web[0].TaskGroups) == unsafe.SliceData(web[1].TaskGroups), must.Sprint("task groups shared"))
	}
}

// TestRestoreFrom_JobRecords: streams written before jobs were shared
// between tables hold whole jobs in job and job version records; they
// restore as before.
func TestRestoreFrom_JobRecords(t *testing.T) {
	job := mockBatchJob("web")
	job.CreateIndex, job.ModifyIndex = 1, 1
	job.Status = structs.JobStatusDead
	var buf bytes.Buffer
	enc := codec.NewEncoder(&buf, snapshotHandle)
	must.NoError(t, enc.Encode(snapshotFormat))
	must.NoError(t, enc.Encode(uint8(jobRecord)))
	must.NoError(t, enc.Encode(job))
	version := *job
	version.Status = structs.JobStatusPending
	must.NoError(t, enc.Encode(uint8(jobVersionRecord)))
	must.NoError(t, enc.Encode(&version))
	must.NoError(t, enc.Encode(uint8(endRecord)))

	restored, err := RestoreFrom(&buf)
	must.NoError(t, err)
	got, err := restored.JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.NotNil(t, got)
	must.Eq(t, job.TaskGroups[0].Name, got.TaskGroups[0].Name)
	versions, err := restored.JobVersionsByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.SliceLen(t, 1, versions)
	must.Eq(t, structs.JobStatusDead, got.Status)
	must.Eq(t, structs.JobStatusPending, versions[0].Status)
	must.True(t, unsafe.SliceData(got.TaskGroups) == unsafe.SliceData(versions[0].TaskGroups), must.Sprint("the version shares the row's task groups"))
}

func TestRestoreFrom_BadStreams(t *testing.T) {
	s := testStore(t)
	populate(t, s)
	snap, err := s.Snapshot()
	must.NoError(t, err)
	var buf bytes.Buffer
	_, err = snap.WriteTo(&buf)
	must.NoError(t, err)
	full := buf.Bytes()

	var orphan bytes.Buffer
	enc := codec.NewEncoder(&orphan, snapshotHandle)
	must.NoError(t, enc.Encode(snapshotFormat))
	must.NoError(t, enc.Encode(uint8(allocRecord)))
	must.NoError(t, enc.Encode(&allocRow{JobRef: 5, Alloc: mockAlloc(mockJob("web"), newID(), newID(), "pending")}))

	// An alloc record without its alloc (the restore decodes into a
	// prepared alloc, which a nil must still replace).
	var empty bytes.Buffer
	enc = codec.NewEncoder(&empty, snapshotHandle)
	must.NoError(t, enc.Encode(snapshotFormat))
	must.NoError(t, enc.Encode(uint8(allocRecord)))
	must.NoError(t, enc.Encode(&allocRow{}))

	// A row the store rejects, early in a stream of several batches: the
	// restore stops there and says which record.
	var rejected bytes.Buffer
	enc = codec.NewEncoder(&rejected, snapshotHandle)
	must.NoError(t, enc.Encode(snapshotFormat))
	for i := range 3 * restoreBatch {
		bad := mockAlloc(mockJob("web"), newID(), newID(), "pending")
		if i == 3 {
			bad.ID = ""
		}
		must.NoError(t, enc.Encode(uint8(allocRecord)))
		must.NoError(t, enc.Encode(&allocRow{Alloc: bad}))
	}
	must.NoError(t, enc.Encode(uint8(endRecord)))

	cases := []struct {
		name   string
		stream []byte
		want   string
	}{
		{"empty", nil, "restore snapshot header"},
		{"other format", []byte{0x07}, "format 7 is not supported"},
		{"truncated", full[:len(full)/2], "restore snapshot"},
		{"no end record", full[:len(full)-1], "without an end record"},
		{"unknown record", []byte{snapshotFormat, 0x63}, "unknown record type 99"},
		{"alloc of unknown job record", orphan.Bytes(), "refers to unknown job record 5"},
		{"row the store rejects", rejected.Bytes(), "record 3 (allocs)"},
		{"alloc record without an alloc", empty.Bytes(), "record 0 (allocs): empty alloc record"},
		{"job row of unknown job record", []byte{snapshotFormat, byte(jobRowRecord), 0x07}, "refers to unknown job record 7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			restored, err := RestoreFrom(bytes.NewReader(tc.stream))
			must.ErrorContains(t, err, tc.want)
			must.Nil(t, restored)
		})
	}
}

// Task.Config is schema-less: numbers come back as 64-bit integers, the
// way they do after any msgpack hop.
func TestSnapshot_ConfigNumbers(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"port": 8080}
	must.NoError(t, s.UpsertJob(1, job))
	restored := restoreCopy(t, s)
	got, err := restored.JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, "8080", fmt.Sprint(got.TaskGroups[0].Tasks[0].Config["port"]))
}

func TestIndexTable(t *testing.T) {
	s := testStore(t)
	latest, err := s.LatestIndex()
	must.NoError(t, err)
	must.Eq(t, 0, latest)
	idx, err := s.Index(TableJobs)
	must.NoError(t, err)
	must.Eq(t, 0, idx)

	populate(t, s)
	must.Eq(t, map[string]uint64{
		TableNodes:           2,
		TableJobs:            7, // running once the plan placed an alloc
		TableJobVersion:      6,
		TableJobSubmission:   3,
		TableScalingEvent:    9,
		TableJobSummary:      8,
		TableEvals:           7,
		TableAllocs:          8,
		TableSchedulerConfig: 9,
		TablePeriodicLaunch:  6,
		TableRootKeys:        10,
		TableNamespaces:      9,
		TableNodePools:       9,
		TableAutopilotConfig: 9,
		TableACLPolicies:     10,
		TableACLRoles:        10,
		TableACLTokens:       10,
		TableOneTimeTokens:   10,
		TableACLAuthMethods:  10,
		TableACLBindingRules: 10,
		TableVariables:       10,

		TableServiceRegistrations: 8,
	}, indexTable(t, s))
	latest, err = s.LatestIndex()
	must.NoError(t, err)
	must.Eq(t, 10, latest)
}

func BenchmarkSnapshot100kAllocs(b *testing.B) {
	s := testStore(b)
	node := mockNode()
	must.NoError(b, s.UpsertNode(1, node))
	index := uint64(2)
	for j := range 10 {
		job := mockBatchJob(fmt.Sprintf("bench-%d", j))
		must.NoError(b, s.UpsertJob(index, job))
		index++
		must.NoError(b, s.UpsertAllocs(index, benchmarkAllocs(job, 10_000)))
		index++
	}
	allocs, err := s.Allocs(nil)
	must.NoError(b, err)
	must.SliceLen(b, 100_000, allocs)

	var size int64
	b.ResetTimer()
	for range b.N {
		snap, err := s.Snapshot()
		must.NoError(b, err)
		size, err = snap.WriteTo(io.Discard)
		must.NoError(b, err)
	}
	b.ReportMetric(float64(size), "bytes/snapshot")
}

// restoreBenchStream returns the snapshot stream of the restart benchmark's
// shape (scripts/bench restore): jobs one-group batch jobs with perJob
// complete allocs each, on 100 nodes.
func restoreBenchStream(b *testing.B, jobs, perJob int) []byte {
	b.Helper()
	s := testStore(b)
	nodes := make([]string, 100)
	index := uint64(1)
	for i := range nodes {
		n := mockNode()
		n.Name = fmt.Sprintf("node-%d", i)
		must.NoError(b, s.UpsertNode(index, n))
		nodes[i] = n.ID
		index++
	}
	finished := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var pending []*structs.Allocation
	for j := range jobs {
		job := mockBatchJob(fmt.Sprintf("restore-%d", j))
		must.NoError(b, s.UpsertJob(index, job))
		index++
		stored, err := s.JobByID(nil, job.Namespace, job.ID)
		must.NoError(b, err)
		for k := range perJob {
			a := mockAlloc(stored, nodes[(j*perJob+k)%len(nodes)], newID(), structs.AllocClientStatusComplete)
			a.Name = fmt.Sprintf("%s.web[%d]", job.ID, k)
			a.TaskStates = map[string]*structs.TaskState{"server": {State: structs.TaskStateDead, StartedAt: finished, FinishedAt: finished}}
			pending = append(pending, a)
		}
		if len(pending) >= 10_000 || j == jobs-1 {
			must.NoError(b, s.UpsertAllocs(index, pending))
			index++
			pending = pending[:0]
		}
	}
	snap, err := s.Snapshot()
	must.NoError(b, err)
	var buf bytes.Buffer
	_, err = snap.WriteTo(&buf)
	must.NoError(b, err)
	return buf.Bytes()
}

// BenchmarkRestore100kAllocs restores 10k jobs / 100k allocs, the state of
// the restart figure of issue 22, and reports the heap the restored store
// holds per alloc: live, and in use.
func BenchmarkRestore100kAllocs(b *testing.B) {
	const jobs, perJob = 10_000, 10
	stream := restoreBenchStream(b, jobs, perJob)
	var before, after runtime.MemStats
	var kept *StateStore
	b.ResetTimer()
	for range b.N {
		kept = nil
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		s, err := RestoreFrom(bytes.NewReader(stream))
		must.NoError(b, err)
		kept = s
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	b.ReportMetric(float64(len(stream))/(jobs*perJob), "stream-bytes/alloc")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(jobs*perJob), "heap-bytes/alloc")
	// In use counts the spans that hold the store, with the free slots its
	// restore's garbage left among its rows: the part of RSS that a
	// restore's garbage decides.
	b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/(jobs*perJob), "heap-inuse-bytes/alloc")
}
