package fsm

import (
	"errors"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// TestFSM_CorruptEntryStops: an entry that does not decode stops the FSM
// with an error naming the entry; nothing after it is applied, and the
// FSM takes no snapshot of the state it stopped with.
func TestFSM_CorruptEntryStops(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry []byte
		want  string
	}{
		{"unknown type", []byte{99, 0x80}, "raft log entry at index 5 (term 2) does not decode: unknown message type 99"},
		{"body", []byte{byte(structs.JobRegisterRequestType), 0xc1}, "raft log entry at index 5 (term 2) does not decode: JobRegisterRequestType body: "},
		{"truncated body", func() []byte {
			buf, err := structs.Encode(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mockJob("cut")})
			must.NoError(t, err)
			return buf[:len(buf)/2]
		}(), "raft log entry at index 5 (term 2) does not decode: JobRegisterRequestType body: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := testFSM(t)
			mustApply(t, f, 4, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mockJob("before")})
			must.Nil(t, f.Fault())

			resp := f.Apply(&raft.Log{Index: 5, Term: 2, Type: raft.LogCommand, Data: tc.entry})
			err, _ := resp.(error)
			must.ErrorIs(t, err, ErrCorruptEntry)
			must.StrContains(t, err.Error(), tc.want)
			var cerr *CorruptEntryError
			must.True(t, errors.As(err, &cerr))
			must.Eq(t, uint64(5), cerr.Index)
			must.Eq(t, uint64(2), cerr.Term)
			must.Eq(t, tc.entry[0], cerr.Type)

			select {
			case <-f.Faulted():
			default:
				t.Fatal("Faulted is not closed")
			}
			must.Eq(t, cerr, f.Fault())

			// A later entry, alone or in a group, is refused and not applied.
			resp = apply(t, f, 6, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mockJob("after")})
			err, _ = resp.(error)
			must.ErrorIs(t, err, ErrCorruptEntry)
			must.StrContains(t, err.Error(), "entry at index 6 not applied: stopped at index 5")
			var group []*raft.Log
			for i, id := range []string{"g1", "g2"} {
				buf, err := structs.Encode(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mockJob(id)})
				must.NoError(t, err)
				group = append(group, &raft.Log{Index: uint64(7 + i), Type: raft.LogCommand, Data: buf})
			}
			for _, r := range f.ApplyBatch(group) {
				err, _ := r.(error)
				must.ErrorIs(t, err, ErrCorruptEntry)
			}
			for _, id := range []string{"after", "g1", "g2"} {
				job, err := f.State().JobByID(nil, structs.DefaultNamespace, id)
				must.NoError(t, err)
				must.Nil(t, job, must.Sprintf("job %q applied after the fault", id))
			}
			latest, _ := f.State().LatestIndex()
			must.Eq(t, uint64(4), latest)

			_, err = f.Snapshot()
			must.ErrorIs(t, err, ErrCorruptEntry)
		})
	}
}

// TestFSM_CorruptEntryInGroup: a body that does not decode in the middle
// of a group commit stops the FSM at that entry: the ones before it are
// applied, the ones after it are not.
func TestFSM_CorruptEntryInGroup(t *testing.T) {
	f := testFSM(t)
	var logs []*raft.Log
	for i, id := range []string{"a", "b", "c"} {
		buf, err := structs.Encode(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mockJob(id)})
		must.NoError(t, err)
		if id == "b" {
			buf = []byte{byte(structs.JobRegisterRequestType), 0xc1}
		}
		logs = append(logs, &raft.Log{Index: uint64(10 + i), Term: 1, Type: raft.LogCommand, Data: buf})
	}
	out := f.ApplyBatch(logs)
	must.Nil(t, out[0])
	for _, r := range out[1:] {
		err, _ := r.(error)
		must.ErrorIs(t, err, ErrCorruptEntry)
	}
	must.Eq(t, uint64(11), f.Fault().Index)
	a, _ := f.State().JobByID(nil, structs.DefaultNamespace, "a")
	must.NotNil(t, a)
	c, _ := f.State().JobByID(nil, structs.DefaultNamespace, "c")
	must.Nil(t, c)
}

// TestFSM_RefusedEntryIsNoFault: entries that decode and are refused
// (a nil object, a state rule, an ignorable unknown type) answer their
// writer and the FSM goes on.
func TestFSM_RefusedEntryIsNoFault(t *testing.T) {
	f := testFSM(t)
	resp := apply(t, f, 1, structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{nil}})
	err, _ := resp.(error)
	must.ErrorContains(t, err, "Evals[0] is nil")
	must.False(t, errors.Is(err, ErrCorruptEntry))

	resp = apply(t, f, 2, structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{JobID: "missing", WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}})
	err, _ = resp.(error)
	must.Error(t, err)
	must.False(t, errors.Is(err, ErrCorruptEntry))

	must.Nil(t, f.Apply(&raft.Log{Index: 3, Data: []byte{byte(structs.IgnoreUnknownTypeFlag | 99), 0x80}}))

	must.Nil(t, f.Fault())
	mustApply(t, f, 4, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mockJob("ok")})
	_, err = f.Snapshot()
	must.NoError(t, err)
}
