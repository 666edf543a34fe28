package fsm

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/nomadq/nomadq/internal/fuzzpath"
	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/nomad/blockedevals"
	"github.com/nomadq/nomadq/nomad/evalbroker"
	"github.com/nomadq/nomadq/structs"
)

// fuzzRequests names, for every message type the FSM applies, the request
// it decodes. A type missing here is still fuzzed (by its number), but a
// decode error is only checked for the types listed.
var fuzzRequests = map[structs.MessageType]func() any{
	structs.NodeRegisterRequestType:                 func() any { return new(structs.NodeRegisterRequest) },
	structs.NodeDeregisterRequestType:               func() any { return new(structs.NodeDeregisterRequest) },
	structs.NodeUpdateStatusRequestType:             func() any { return new(structs.NodeUpdateStatusRequest) },
	structs.NodeUpdateEligibilityRequestType:        func() any { return new(structs.NodeUpdateEligibilityRequest) },
	structs.NodeUpdateDrainRequestType:              func() any { return new(structs.NodeUpdateDrainRequest) },
	structs.BatchNodeUpdateDrainRequestType:         func() any { return new(structs.BatchNodeUpdateDrainRequest) },
	structs.AllocUpdateDesiredTransitionRequestType: func() any { return new(structs.AllocUpdateDesiredTransitionRequest) },
	structs.JobRegisterRequestType:                  func() any { return new(structs.JobRegisterRequest) },
	structs.JobDeregisterRequestType:                func() any { return new(structs.JobDeregisterRequest) },
	structs.EvalUpdateRequestType:                   func() any { return new(structs.EvalUpdateRequest) },
	structs.EvalDeleteRequestType:                   func() any { return new(structs.EvalDeleteRequest) },
	structs.AllocClientUpdateRequestType:            func() any { return new(structs.AllocUpdateRequest) },
	structs.ApplyPlanResultsRequestType:             func() any { return new(structs.ApplyPlanResultsRequest) },
	structs.SchedulerConfigRequestType:              func() any { return new(structs.SchedulerSetConfigRequest) },
	structs.BatchQueueReleaseRequestType:            func() any { return new(structs.BatchQueueReleaseRequest) },
	structs.BatchQueueControlRequestType:            func() any { return new(structs.BatchQueueControlRequest) },
	structs.BatchQueueUsageResetRequestType:         func() any { return new(structs.BatchQueueUsageResetRequest) },
	structs.PeriodicLaunchRequestType:               func() any { return new(structs.PeriodicLaunchRequest) },
	structs.RootKeyUpsertRequestType:                func() any { return new(structs.RootKeyUpsertRequest) },
	structs.RootKeyDeleteRequestType:                func() any { return new(structs.RootKeyDeleteRequest) },
	structs.ACLPolicyUpsertRequestType:              func() any { return new(structs.ACLPolicyUpsertRequest) },
	structs.ACLPolicyDeleteRequestType:              func() any { return new(structs.ACLPolicyDeleteRequest) },
	structs.ACLTokenUpsertRequestType:               func() any { return new(structs.ACLTokenUpsertRequest) },
	structs.ACLTokenDeleteRequestType:               func() any { return new(structs.ACLTokenDeleteRequest) },
	structs.ACLTokenBootstrapRequestType:            func() any { return new(structs.ACLTokenBootstrapRequest) },
	structs.OneTimeTokenUpsertRequestType:           func() any { return new(structs.OneTimeTokenUpsertRequest) },
	structs.OneTimeTokenDeleteRequestType:           func() any { return new(structs.OneTimeTokenDeleteRequest) },
	structs.OneTimeTokenExpireRequestType:           func() any { return new(structs.OneTimeTokenDeleteRequest) },
	structs.ACLRolesUpsertRequestType:               func() any { return new(structs.ACLRolesUpsertRequest) },
	structs.ACLRolesDeleteByIDRequestType:           func() any { return new(structs.ACLRolesDeleteByIDRequest) },
	structs.ACLAuthMethodsUpsertRequestType:         func() any { return new(structs.ACLAuthMethodUpsertRequest) },
	structs.ACLAuthMethodsDeleteRequestType:         func() any { return new(structs.ACLAuthMethodDeleteRequest) },
	structs.ACLBindingRulesUpsertRequestType:        func() any { return new(structs.ACLBindingRulesUpsertRequest) },
	structs.ACLBindingRulesDeleteRequestType:        func() any { return new(structs.ACLBindingRulesDeleteRequest) },
	structs.NamespaceUpsertRequestType:              func() any { return new(structs.NamespaceUpsertRequest) },
	structs.NamespaceDeleteRequestType:              func() any { return new(structs.NamespaceDeleteRequest) },
	structs.NodePoolUpsertRequestType:               func() any { return new(structs.NodePoolUpsertRequest) },
	structs.NodePoolDeleteRequestType:               func() any { return new(structs.NodePoolDeleteRequest) },
	structs.JobStabilityRequestType:                 func() any { return new(structs.JobStabilityRequest) },
	structs.ScalingEventRegisterRequestType:         func() any { return new(structs.ScalingEventRequest) },
	structs.ReconcileJobSummariesRequestType:        func() any { return new(structs.ReconcileJobSummariesRequest) },
	structs.AutopilotRequestType:                    func() any { return new(structs.AutopilotSetConfigRequest) },
	structs.VarApplyStateRequestType:                func() any { return new(structs.VarApplyStateRequest) },

	structs.ServiceRegistrationUpsertRequestType:         func() any { return new(structs.ServiceRegistrationUpsertRequest) },
	structs.ServiceRegistrationDeleteByIDRequestType:     func() any { return new(structs.ServiceRegistrationDeleteByIDRequest) },
	structs.ServiceRegistrationDeleteByNodeIDRequestType: func() any { return new(structs.ServiceRegistrationDeleteByNodeIDRequest) },
}

// TestFuzzRequests_CoverEveryType: every message type the FSM applies
// (every type it does not answer as unknown) has its request in
// fuzzRequests, so FuzzApply seeds it and checks its decode errors.
func TestFuzzRequests_CoverEveryType(t *testing.T) {
	for typ := range structs.IgnoreUnknownTypeFlag {
		// A fresh FSM each time: the first entry that does not decode
		// stops the one it reaches.
		resp := fuzzFSM(t).Apply(&raft.Log{Index: 10, Type: raft.LogCommand, Data: []byte{byte(typ), 0xc1}})
		err, _ := resp.(error)
		unknown := err != nil && strings.Contains(err.Error(), "unknown message type")
		_, listed := fuzzRequests[typ]
		if !unknown && !listed {
			t.Errorf("the FSM applies %s but fuzzRequests does not list it", typ)
		}
		if unknown && listed {
			t.Errorf("fuzzRequests lists %s, which the FSM does not know", typ)
		}
	}
}

// The IDs of what fuzzBase stores, so that seeds can name them.
const (
	fuzzNodeID  = "00000000-0000-0000-0000-00000000000a"
	fuzzJobID   = "fuzz-job"
	fuzzEvalID  = "00000000-0000-0000-0000-00000000000e"
	fuzzAllocID = "00000000-0000-0000-0000-0000000000a1"
)

// fuzzBase returns a node, a job, its eval and an alloc on the node, with
// fixed IDs and times so that every run of an input is the same.
func fuzzBase() (*structs.Node, *structs.Job, *structs.Evaluation, *structs.Allocation) {
	node := mockNode(fuzzNodeID)
	job := mockJob(fuzzJobID)
	eval := mock.JobEval(job)
	eval.ID = fuzzEvalID
	eval.Status = structs.EvalStatusComplete
	alloc := mock.Alloc(job, node, eval.ID)
	alloc.ID = fuzzAllocID
	alloc.CreateTime = time.Unix(1700000000, 0).UnixNano()
	return node, job, eval, alloc
}

// fuzzFSM returns a follower's FSM holding fuzzBase's node, job, eval and
// alloc at indexes 1 to 3.
func fuzzFSM(t testing.TB) *FSM {
	t.Helper()
	broker, err := evalbroker.New(time.Minute, time.Second, time.Second, 3)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(hclog.NewNullLogger(), blockedevals.New(broker, hclog.NewNullLogger()), broker)
	if err != nil {
		t.Fatal(err)
	}
	node, job, eval, alloc := fuzzBase()
	for i, msg := range []struct {
		typ structs.MessageType
		req any
	}{
		{structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node}},
		{structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval}},
		{structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{alloc}, EvalID: eval.ID}},
	} {
		buf, err := structs.Encode(msg.typ, msg.req)
		if err != nil {
			t.Fatal(err)
		}
		if resp := f.Apply(&raft.Log{Index: uint64(i + 1), Data: buf}); resp != nil {
			if err, ok := resp.(error); ok {
				t.Fatalf("base state %s: %v", msg.typ, err)
			}
		}
	}
	return f
}

// fuzzSeeds are well-formed entries of the common types, about the
// objects fuzzFSM stores, and the empty request of every type.
func fuzzSeeds() map[structs.MessageType][]any {
	node, job, eval, alloc := fuzzBase()
	done := alloc.Copy()
	done.ClientStatus = structs.AllocClientStatusComplete
	job2 := job.Copy()
	job2.Priority = 70
	pending := mock.JobEval(job2)
	pending.ID = "00000000-0000-0000-0000-00000000000f"
	ref := structs.BatchQueueRef{Namespace: job.Namespace, JobID: job.ID, EvalID: eval.ID}
	seeds := map[structs.MessageType][]any{
		structs.NodeRegisterRequestType:     {&structs.NodeRegisterRequest{Node: node}},
		structs.NodeDeregisterRequestType:   {&structs.NodeDeregisterRequest{NodeIDs: []string{node.ID}}},
		structs.NodeUpdateStatusRequestType: {&structs.NodeUpdateStatusRequest{NodeID: node.ID, Status: structs.NodeStatusDown, Evals: []*structs.Evaluation{pending}}},
		structs.JobRegisterRequestType:      {&structs.JobRegisterRequest{Job: job2, Eval: pending}},
		structs.JobDeregisterRequestType:    {&structs.JobDeregisterRequest{JobID: job.ID, Purge: true, Eval: pending}},
		structs.EvalUpdateRequestType:       {&structs.EvalUpdateRequest{Evals: []*structs.Evaluation{pending}}},
		structs.EvalDeleteRequestType:       {&structs.EvalDeleteRequest{Evals: []string{eval.ID}, Allocs: []string{alloc.ID}}},
		structs.AllocClientUpdateRequestType: {&structs.AllocUpdateRequest{
			Alloc: []*structs.Allocation{done}, Evals: []*structs.Evaluation{pending},
		}},
		structs.ApplyPlanResultsRequestType: {&structs.ApplyPlanResultsRequest{
			AllocsStopped: []*structs.Allocation{alloc}, Job: job, EvalID: eval.ID, Evals: []*structs.Evaluation{pending},
		}},
		structs.SchedulerConfigRequestType: {&structs.SchedulerSetConfigRequest{
			Config: structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmSpread},
		}},
		structs.BatchQueueReleaseRequestType:    {&structs.BatchQueueReleaseRequest{Done: []structs.BatchQueueRef{ref}, Release: []structs.BatchQueueRef{ref}, ReleaseTime: 1}},
		structs.BatchQueueControlRequestType:    {&structs.BatchQueueControlRequest{JobID: job.ID, Op: "hold"}},
		structs.BatchQueueUsageResetRequestType: {&structs.BatchQueueUsageResetRequest{Time: 1}},
		structs.PeriodicLaunchRequestType:       {&structs.PeriodicLaunchRequest{Job: job2, Eval: pending}},
		structs.JobStabilityRequestType:         {&structs.JobStabilityRequest{JobID: job.ID, Stable: true}},

		structs.ServiceRegistrationUpsertRequestType: {&structs.ServiceRegistrationUpsertRequest{Services: []*structs.ServiceRegistration{{
			ID: "_nomad-task-" + alloc.ID + "-group-web-web-http", ServiceName: "web", Namespace: alloc.Namespace,
			NodeID: node.ID, JobID: job.ID, AllocID: alloc.ID, Address: "10.0.0.1", Port: 8080,
		}}}},
		structs.ServiceRegistrationDeleteByIDRequestType:     {&structs.ServiceRegistrationDeleteByIDRequest{ID: "_nomad-task-" + alloc.ID + "-group-web-web-http"}},
		structs.ServiceRegistrationDeleteByNodeIDRequestType: {&structs.ServiceRegistrationDeleteByNodeIDRequest{NodeID: node.ID}},
	}
	for typ, req := range fuzzRequests {
		seeds[typ] = append(seeds[typ], req())
	}
	return seeds
}

// FuzzApply feeds Raft entries to a fresh FSM: a message type byte and
// the bytes after it, as Apply reads them from the log. Whatever the
// bytes, nothing panics; an entry whose body does not decode as its
// type's request is answered with an error, and the same entry applied in
// a group with well-formed ones does not panic either.
func FuzzApply(f *testing.F) {
	for typ, reqs := range fuzzSeeds() {
		for _, req := range reqs {
			buf, err := structs.Encode(typ, req)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(typ), buf[1:])
		}
	}
	f.Add(uint8(structs.IgnoreUnknownTypeFlag|structs.JobRegisterRequestType), []byte{0x80})
	f.Add(uint8(250), []byte{})

	f.Fuzz(func(t *testing.T, typ uint8, body []byte) {
		entry := append([]byte{typ}, body...)
		resp := fuzzFSM(t).Apply(&raft.Log{Index: 10, Type: raft.LogCommand, Data: entry})
		msgType := structs.MessageType(typ) &^ structs.IgnoreUnknownTypeFlag
		if newReq, ok := fuzzRequests[msgType]; ok {
			if err := structs.Decode(body, newReq()); err != nil {
				if rerr, isErr := resp.(error); !isErr || !errors.Is(rerr, ErrCorruptEntry) {
					t.Fatalf("%s: the body does not decode (%v) but the FSM answered %#v, not a fault", msgType, err, resp)
				}
			}
		}

		_, _, pending, _ := fuzzBase()
		pending.ID = "00000000-0000-0000-0000-0000000000e2"
		pending.Status = structs.EvalStatusPending
		good, err := structs.Encode(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{pending}})
		if err != nil {
			t.Fatal(err)
		}
		fuzzFSM(t).ApplyBatch([]*raft.Log{
			{Index: 10, Type: raft.LogCommand, Data: good},
			{Index: 11, Type: raft.LogCommand, Data: entry},
			{Index: 12, Type: raft.LogCommand, Data: good},
		})
	})
}

// FuzzApplyField is FuzzApply with the entry kept well-formed: it takes
// one of the seed entries, sets one field (named by a dotted path such
// as "Job.TaskGroups.0.Tasks") to a fuzzed value (JSON when it parses as
// JSON, a string otherwise) and applies the result, so that the fuzzer
// spends its time on entries that decode and reach the state store.
func FuzzApplyField(f *testing.F) {
	entries := fuzzSeedEntries(f)
	for _, seed := range []struct {
		which uint8
		path  string
		value string
	}{
		{0, "Job.TaskGroups.0", "null"},
		{0, "Job.TaskGroups.0.Tasks", "[null]"},
		{0, "Job.TaskGroups", "[]"},
		{0, "Job", "{}"},
		{0, "Eval.JobID", `""`},
		{1, "Node.Resources", "null"},
		{1, "Node.NodeResources", "null"},
		{1, "Node.Status", `"down"`},
		{2, "AllocsUpdated.0.Job", "null"},
		{2, "AllocsUpdated.0.AllocatedResources", "null"},
		{2, "AllocsStopped.0.ID", `"nope"`},
		{3, "Alloc.0.TaskStates", `{"t": null}`},
		{3, "Alloc.0.ClientStatus", `"lost"`},
		{4, "Config.BatchQueue.ConcurrentPlacements", "-1"},
		{5, "Release.0.JobID", `""`},
		{6, "Launch", "null"},
		{6, "Job.Periodic", `{"Enabled": true, "Spec": "* * * * *"}`},
	} {
		f.Add(seed.which, seed.path, []byte(seed.value))
	}

	f.Fuzz(func(t *testing.T, which uint8, path string, value []byte) {
		e := entries[int(which)%len(entries)]
		var m map[string]any
		if err := structs.Decode(e.body, &m); err != nil {
			t.Fatal(err)
		}
		fuzzpath.Set(m, path, fuzzValue(value))
		entry, err := structs.Encode(e.typ, m)
		if err != nil {
			return
		}
		fuzzFSM(t).Apply(&raft.Log{Index: 10, Type: raft.LogCommand, Data: entry})
	})
}

type fuzzEntry struct {
	typ  structs.MessageType
	body []byte
}

// fuzzSeedEntries encodes the well-formed seeds, the ones FuzzApplyField's
// own seeds name by position first.
func fuzzSeedEntries(f *testing.F) []fuzzEntry {
	seeds := fuzzSeeds()
	first := []structs.MessageType{
		structs.JobRegisterRequestType,
		structs.NodeRegisterRequestType,
		structs.ApplyPlanResultsRequestType,
		structs.AllocClientUpdateRequestType,
		structs.SchedulerConfigRequestType,
		structs.BatchQueueReleaseRequestType,
		structs.PeriodicLaunchRequestType,
	}
	var out []fuzzEntry
	add := func(typ structs.MessageType) {
		buf, err := structs.Encode(typ, seeds[typ][0])
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, fuzzEntry{typ, buf[1:]})
	}
	for _, typ := range first {
		add(typ)
	}
	rest := make([]int, 0, len(seeds))
	for typ := range seeds {
		if !slices.Contains(first, typ) {
			rest = append(rest, int(typ))
		}
	}
	slices.Sort(rest)
	for _, typ := range rest {
		add(structs.MessageType(typ))
	}
	return out
}

// fuzzValue reads a fuzzed value as JSON when it is JSON, with whole
// numbers as int64 as the Raft codec decodes them, else as a string.
func fuzzValue(b []byte) any {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil || d.More() {
		return string(b)
	}
	return numbers(v)
}

func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}
