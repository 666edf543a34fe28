package structs

import (
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/shoenig/test/must"
)

// roundTrip encodes msg as a Raft entry of type typ and decodes it into a
// new value of the same type.
func roundTrip[T any](t *testing.T, typ MessageType, msg *T) *T {
	t.Helper()
	buf, err := Encode(typ, msg)
	must.NoError(t, err)
	must.Eq(t, byte(typ), buf[0])
	var out T
	must.NoError(t, Decode(buf[1:], &out))
	return &out
}

func TestCodec_RaftRequests(t *testing.T) {
	wr := WriteRequest{Region: "global", Namespace: "default", AuthToken: "secret", IdempotencyToken: "idem-1"}
	nodeEvent := &NodeEvent{Message: "Node heartbeat missed", Subsystem: "Cluster", Details: map[string]string{"ttl": "10s"}, Timestamp: testTime(7), CreateIndex: 8}

	t.Run("NodeRegisterRequest", func(t *testing.T) {
		req := &NodeRegisterRequest{Node: testNode(), NodeEvent: nodeEvent, WriteRequest: wr}
		must.Eq(t, req, roundTrip(t, NodeRegisterRequestType, req))
	})
	t.Run("NodeDeregisterRequest", func(t *testing.T) {
		req := &NodeDeregisterRequest{NodeIDs: []string{"a", "b"}, WriteRequest: wr}
		must.Eq(t, req, roundTrip(t, NodeBatchDeregisterRequestType, req))
	})
	t.Run("NodeUpdateStatusRequest", func(t *testing.T) {
		req := &NodeUpdateStatusRequest{NodeID: "n1", Status: NodeStatusDown, NodeEvent: nodeEvent, UpdatedAt: testTime(9).UnixNano(), Evals: []*Evaluation{testEval()}, WriteRequest: wr}
		must.Eq(t, req, roundTrip(t, NodeUpdateStatusRequestType, req))
	})
	t.Run("NodeUpdateEligibilityRequest", func(t *testing.T) {
		req := &NodeUpdateEligibilityRequest{NodeID: "n1", Eligibility: NodeSchedulingIneligible, NodeEvent: nodeEvent, UpdatedAt: 99, WriteRequest: wr}
		must.Eq(t, req, roundTrip(t, NodeUpdateEligibilityRequestType, req))
	})
	t.Run("JobRegisterRequest", func(t *testing.T) {
		req := &JobRegisterRequest{Job: testJob(), Eval: testEval(), EnforceIndex: true, JobModifyIndex: 7, EvalPriority: 60, PreserveCounts: true, WriteRequest: wr}
		got := roundTrip(t, JobRegisterRequestType, req)
		must.Eq(t, req, got)
		// The nested driver config comes back with the same Go types.
		cfg := got.Job.TaskGroups[0].Tasks[0].Config
		must.Eq[any](t, []any{map[string]any{"http": int64(8080), "admin": int64(9000)}}, cfg["port_map"])
		must.Eq[any](t, 0.75, cfg["mount"].(map[string]any)["options"].(map[string]any)["ratio"])
	})
	t.Run("JobRegisterRequest batch", func(t *testing.T) {
		req := &JobRegisterRequest{Job: testBatchJob(), Eval: testEval(), WriteRequest: wr}
		got := roundTrip(t, JobRegisterRequestType, req)
		must.Eq(t, req, got)
		must.Eq(t, 10*time.Minute, *got.Job.TaskGroups[0].MaxRunDuration)
	})
	t.Run("JobRegisterRequest dispatched child", func(t *testing.T) {
		req := &JobRegisterRequest{Job: testDispatchedChild(), WriteRequest: wr}
		got := roundTrip(t, JobRegisterRequestType, req)
		must.Eq(t, req, got)
		must.Eq(t, []byte(`{"index":"users"}`), got.Job.Payload)
	})
	t.Run("JobDeregisterRequest", func(t *testing.T) {
		req := &JobDeregisterRequest{JobID: "web", Purge: true, Eval: testEval(), WriteRequest: wr}
		must.Eq(t, req, roundTrip(t, JobDeregisterRequestType, req))
	})
	t.Run("EvalUpdateRequest", func(t *testing.T) {
		req := &EvalUpdateRequest{Evals: []*Evaluation{testEval(), {ID: "e2", Status: EvalStatusPending}}, EvalToken: "tok", WriteRequest: wr}
		must.Eq(t, req, roundTrip(t, EvalUpdateRequestType, req))
	})
	t.Run("EvalDeleteRequest", func(t *testing.T) {
		req := &EvalDeleteRequest{Evals: []string{"e1", "e2"}, Allocs: []string{"a1"}, WriteRequest: wr}
		must.Eq(t, req, roundTrip(t, EvalDeleteRequestType, req))
	})
	t.Run("AllocUpdateRequest", func(t *testing.T) {
		req := &AllocUpdateRequest{Alloc: []*Allocation{testAlloc(testBatchJob())}, Evals: []*Evaluation{testEval()}, WriteRequest: wr}
		must.Eq(t, req, roundTrip(t, AllocClientUpdateRequestType, req))
	})
	t.Run("ApplyPlanResultsRequest", func(t *testing.T) {
		j := testBatchJob()
		stopped := testAlloc(j)
		stopped.ID = "stopped"
		stopped.DesiredStatus = AllocDesiredStatusStop
		req := &ApplyPlanResultsRequest{
			AllocsUpdated: []*Allocation{testAlloc(j)},
			AllocsStopped: []*Allocation{stopped},
			Job:           j,
			EvalID:        "e1",
			Evals:         []*Evaluation{testEval()},
			WriteRequest:  wr,
		}
		got := roundTrip(t, ApplyPlanResultsRequestType, req)
		must.Eq(t, req, got)
		deadline, ok := got.AllocsUpdated[0].MaxRunDeadline()
		must.True(t, ok)
		must.Eq(t, testTime(1).Add(10*time.Minute), deadline)
	})
	t.Run("SchedulerSetConfigRequest", func(t *testing.T) {
		cfg := DefaultSchedulerConfiguration()
		cfg.BatchQueue.Enabled = true
		cfg.BatchQueue.Order = BatchQueueOrderPriority
		cfg.ModifyIndex = 5
		req := &SchedulerSetConfigRequest{Config: *cfg, CAS: true, WriteRequest: wr}
		must.Eq(t, req, roundTrip(t, SchedulerConfigRequestType, req))
	})
}

// Times lose their monotonic reading and location, but not their instant.
func TestCodec_Time(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	now := time.Now() // has a monotonic reading
	in := &TaskState{
		LastRestart: now,
		StartedAt:   time.Date(2026, 3, 1, 12, 30, 0, 987654321, berlin),
	}
	out := roundTrip(t, AllocClientUpdateRequestType, in)
	must.True(t, out.LastRestart.Equal(now))
	must.True(t, out.StartedAt.Equal(in.StartedAt))
	must.Eq(t, time.UTC, out.StartedAt.Location())
	must.True(t, out.FinishedAt.IsZero())
}

func TestCodec_NilAndEmpty(t *testing.T) {
	in := &Job{ID: "x", Meta: map[string]string{}, Datacenters: []string{}, TaskGroups: nil}
	out := roundTrip(t, JobRegisterRequestType, in)
	must.NotNil(t, out.Meta)
	must.NotNil(t, out.Datacenters)
	must.Nil(t, out.TaskGroups)
	must.Nil(t, out.Constraints)
}

func TestCodec_Json(t *testing.T) {
	// The JSON handles keep HTML characters as they are.
	var buf []byte
	enc := newJSONEncoder(&buf, JsonHandle)
	must.NoError(t, enc.Encode(&Constraint{LTarget: "${attr.x}", RTarget: "<3 & >1", Operand: "regexp"}))
	must.StrContains(t, string(buf), `"RTarget":"<3 & >1"`)

	buf = nil
	must.NoError(t, newJSONEncoder(&buf, JsonHandlePretty).Encode(&Constraint{Operand: "="}))
	must.StrContains(t, string(buf), "\n    \"LTarget\": \"\"")

	// A driver config sent as JSON decodes to the types msgpack keeps.
	var task Task
	in := `{"Name":"t","Config":{"command":"/bin/x","port":8080,"ratio":0.5,"args":["-v",1],"mount":{"ro":true,"opts":{"n":2}}}}`
	must.NoError(t, codec.NewDecoderBytes([]byte(in), JsonHandle).Decode(&task))
	want := map[string]any{
		"command": "/bin/x",
		"port":    int64(8080),
		"ratio":   0.5,
		"args":    []any{"-v", int64(1)},
		"mount":   map[string]any{"ro": true, "opts": map[string]any{"n": int64(2)}},
	}
	must.Eq(t, want, task.Config)
	j := &Job{ID: "x", TaskGroups: []*TaskGroup{{Tasks: []*Task{&task}}}}
	must.Eq(t, j, roundTrip(t, JobRegisterRequestType, j))
}

func BenchmarkEncodeJob(b *testing.B) {
	req := &JobRegisterRequest{Job: testJob(), Eval: testEval()}
	buf, err := Encode(JobRegisterRequestType, req)
	must.NoError(b, err)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(JobRegisterRequestType, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeJob(b *testing.B) {
	req := &JobRegisterRequest{Job: testJob(), Eval: testEval()}
	buf, err := Encode(JobRegisterRequestType, req)
	must.NoError(b, err)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		var out JobRegisterRequest
		if err := Decode(buf[1:], &out); err != nil {
			b.Fatal(err)
		}
	}
}

func newJSONEncoder(buf *[]byte, h *codec.JsonHandle) *codec.Encoder {
	return codec.NewEncoderBytes(buf, h)
}
