package nomad

import (
	"github.com/hashicorp/raft"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// maxBatchRun caps how many entries share one memdb transaction. Most of
// the saving comes with the first few; splitting each entry's changes
// out for the event stream costs more the longer the run.
const maxBatchRun = 16

// entryWriter takes one Raft entry's writes, and runs the hand-offs to
// the leader's structures (broker, blocked evals) once they are visible:
// the store itself, where each write commits on its own and hand-offs run
// at once, or an open write batch, where they wait for its commit.
type entryWriter interface {
	UpsertJobWithSubmission(index uint64, job *structs.Job, sub *structs.JobSubmission, eval *structs.Evaluation) error
	UpsertEvals(index uint64, evals []*structs.Evaluation) error
	UpdateAllocsFromClient(index uint64, allocs []*structs.Allocation) error
	UpsertPlanResults(index uint64, req *structs.ApplyPlanResultsRequest) error
	BatchQueueHoldsEval(e *structs.Evaluation) bool
	after(fn func())
}

type directWriter struct{ *state.StateStore }

func (directWriter) after(fn func()) { fn() }

func (f *nomadFSM) direct() entryWriter { return directWriter{f.State()} }

type batchWriter struct {
	*state.WriteBatch
	effects []func()
}

func (w *batchWriter) after(fn func()) { w.effects = append(w.effects, fn) }

// batchable reports whether an entry's type can share a transaction
// with its neighbours: the types the FSM applies by the thousand, whose
// handlers read state only through the transaction.
func batchable(l *raft.Log) bool {
	if l.Type != raft.LogCommand || len(l.Data) == 0 {
		return false
	}
	switch structs.MessageType(l.Data[0]) {
	case structs.JobRegisterRequestType, structs.EvalUpdateRequestType,
		structs.AllocClientUpdateRequestType, structs.ApplyPlanResultsRequestType:
		return true
	}
	return false
}

// ApplyBatch applies the entries Raft committed together. Runs of
// batchable entries share one memdb transaction (state.WriteBatch); the
// others, and a run of one, are applied as Apply does. The state
// afterwards is the same either way, so servers that happen to group the
// same entries differently stay equal.
func (f *nomadFSM) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	for i := 0; i < len(logs); {
		j := i
		for j < len(logs) && j-i < maxBatchRun && batchable(logs[j]) {
			j++
		}
		if j-i >= 2 {
			f.applyRun(logs[i:j], out[i:j])
			i = j
			continue
		}
		if logs[i].Type == raft.LogCommand {
			out[i] = f.Apply(logs[i])
		}
		i++
	}
	return out
}

// applyRun applies a run of batchable entries in one transaction. When
// one of them fails, the transaction is dropped and each entry applied
// on its own instead, so the failed one gets its error and leaves
// nothing behind, as it would have alone.
func (f *nomadFSM) applyRun(logs []*raft.Log, out []any) {
	st := f.State()
	b := st.BeginBatch()
	effects := make([][]func(), len(logs))
	for k, l := range logs {
		w := &batchWriter{WriteBatch: b}
		if err := f.batchEntry(w, l); err != nil {
			b.Abort()
			f.batchFallbacks.Add(1)
			for k, l := range logs {
				out[k] = f.Apply(l)
			}
			return
		}
		effects[k] = w.effects
	}
	if err := b.Commit(); err != nil {
		// Commit fails only for a spoilt batch, which returned above.
		panic(err)
	}
	f.batchedEntries.Add(int64(len(logs)))
	for k, l := range logs {
		for _, fn := range effects[k] {
			fn()
		}
		f.publishEvents(structs.MessageType(l.Data[0]), l.Index)
	}
}

func (f *nomadFSM) batchEntry(w entryWriter, l *raft.Log) error {
	buf := l.Data[1:]
	switch structs.MessageType(l.Data[0]) {
	case structs.JobRegisterRequestType:
		return f.jobRegister(w, buf, l.Index)
	case structs.EvalUpdateRequestType:
		return f.evalUpdate(w, buf, l.Index)
	case structs.AllocClientUpdateRequestType:
		return f.allocClientUpdate(w, buf, l.Index)
	case structs.ApplyPlanResultsRequestType:
		return f.planResults(w, buf, l.Index)
	}
	panic("batchEntry: not a batchable entry")
}
