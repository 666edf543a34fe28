package nomad

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// nested returns a value that nests depth levels of maps and lists.
func nested(depth int) any {
	var v any = "leaf"
	for i := range depth {
		if i%2 == 0 {
			v = []any{v}
		} else {
			v = map[string]any{"k": v}
		}
	}
	return v
}

// TestMsgpackDepth: the depth read from the bytes is the depth the
// value was built with, inside the request struct (one level more), for
// every container encoding (fix, 16 and 32 bit lengths) and scalar kind
// the encoder writes.
func TestMsgpackDepth(t *testing.T) {
	big := make([]any, 70000) // an array32
	for i := range big {
		big[i] = int64(i) * -1_000_003
	}
	wide := map[string]any{}
	for i := range 20 { // a map16
		wide[strings.Repeat("k", i+1)] = []byte(strings.Repeat("b", 300))
	}
	for _, tc := range []struct {
		name  string
		meta  any
		depth int
	}{
		{"scalar", "x", 2},
		{"nested 10", nested(10), 12},
		{"nested 1100", nested(1100), maxEntryDepth + 1},
		{"wide", map[string]any{"a": big, "b": wide, "c": 3.5, "d": true, "e": nil, "f": strings.Repeat("s", 70000)}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf, err := structs.Encode(structs.ScalingEventRegisterRequestType, &structs.ScalingEventRequest{
				Namespace: "default", JobID: "j",
				ScalingEvent: &structs.ScalingEvent{Meta: map[string]any{"m": tc.meta}},
			})
			must.NoError(t, err)
			// The request itself and its ScalingEvent add levels; compare
			// with a scalar's depth.
			base, err := structs.Encode(structs.ScalingEventRegisterRequestType, &structs.ScalingEventRequest{
				ScalingEvent: &structs.ScalingEvent{Meta: map[string]any{"m": "x"}},
			})
			must.NoError(t, err)
			d0, err := msgpackDepth(base[1:], maxEntryDepth)
			must.NoError(t, err)
			d, err := msgpackDepth(buf[1:], maxEntryDepth)
			must.NoError(t, err)
			must.Eq(t, min(d0+tc.depth-2, maxEntryDepth+1), d)
		})
	}
}

// TestRaftApply_RefusesEntryTooDeepToDecode: a write whose entry nests
// past what the log's decoder reads is refused with a 400 before it is
// committed (committed, it would stop every server), and the server goes
// on taking writes.
func TestRaftApply_RefusesEntryTooDeepToDecode(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	job := mockJob("scaled")
	registerJob(t, s, job)
	_, _, err := s.raftApply(structs.ScalingEventRegisterRequestType, &structs.ScalingEventRequest{
		Namespace: job.Namespace, JobID: job.ID,
		ScalingEvent: &structs.ScalingEvent{Meta: map[string]any{"m": nested(1100)}},
	})
	code, msg, ok := structs.CodeFromRPCCodedErr(err)
	must.True(t, ok)
	must.Eq(t, 400, code)
	must.Eq(t, "ScalingEventRegisterRequestType: the request's maps and lists nest more than 1000 levels, more than a server reads back from its Raft log", msg)
	must.Nil(t, s.fsm.Fault())
	registerJob(t, s, mockJob("after"))
}

// BenchmarkCheckEntryDepth: the depth check reads every write's encoded
// entry once; here a job register entry of a job with 50 task groups.
func BenchmarkCheckEntryDepth(b *testing.B) {
	job := mockJob("bench")
	for len(job.TaskGroups) < 50 {
		tg := job.TaskGroups[0].Copy()
		tg.Name = fmt.Sprintf("group-%d", len(job.TaskGroups))
		job.TaskGroups = append(job.TaskGroups, tg)
	}
	buf, err := structs.Encode(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	must.NoError(b, err)
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for b.Loop() {
		if err := checkEntryDepth(structs.JobRegisterRequestType, buf); err != nil {
			b.Fatal(err)
		}
	}
}
