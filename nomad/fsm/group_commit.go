package fsm

import (
	"github.com/hashicorp/raft"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// maxGroupCommit caps how many entries share one memdb transaction. Most
// of the saving comes with the first few; splitting each entry's changes
// out for the event stream costs more the longer the run.
const maxGroupCommit = 16

// entryWriter takes one Raft entry's writes of evals (and what comes with
// them) into a group write, its own or one shared with its neighbours,
// and keeps the hand-offs to the leader's structures (broker, blocked
// evals) until the group commits and the writes are visible.
type entryWriter struct {
	*state.GroupWrite
	effects []func()
}

// after runs fn once the entry's writes are committed.
func (w *entryWriter) after(fn func()) { w.effects = append(w.effects, fn) }

// alone applies one entry's writes in a group write of its own, and runs
// its hand-offs after the commit.
func (f *FSM) alone(fn func(w *entryWriter) error) error {
	g := f.State().BeginGroupWrite()
	w := &entryWriter{GroupWrite: g}
	if err := fn(w); err != nil {
		g.Abort()
		return err
	}
	if err := g.Commit(); err != nil {
		return err
	}
	for _, fn := range w.effects {
		fn()
	}
	return nil
}

// groupable reports whether an entry's type can share a transaction with
// its neighbours: the types the FSM applies by the thousand, whose
// handlers read state only through the transaction.
func groupable(l *raft.Log) bool {
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

// ApplyBatch applies the entries Raft committed together (raft's
// BatchingFSM). Runs of groupable entries are group-committed: they share
// one memdb transaction (state.GroupWrite). The others, and a run of one,
// are applied as Apply does. The state afterwards is the same either way,
// so servers that happen to group the same entries differently stay
// equal.
func (f *FSM) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	for i := 0; i < len(logs); {
		j := i
		for j < len(logs) && j-i < maxGroupCommit && groupable(logs[j]) {
			j++
		}
		// A stopped FSM applies nothing: Apply refuses each entry.
		if j-i >= 2 && f.Fault() == nil {
			f.groupCommit(logs[i:j], out[i:j])
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

// groupCommit applies a run of groupable entries in one transaction.
// When one of them fails, the transaction is dropped and each entry
// applied on its own instead, so the failed one gets its error and leaves
// nothing behind, as it would have alone.
func (f *FSM) groupCommit(logs []*raft.Log, out []any) {
	g := f.State().BeginGroupWrite()
	effects := make([][]func(), len(logs))
	for k, l := range logs {
		w := &entryWriter{GroupWrite: g}
		if err := f.groupEntry(w, l); err != nil {
			g.Abort()
			f.groupFallbacks.Add(1)
			for k, l := range logs {
				out[k] = f.Apply(l)
			}
			return
		}
		effects[k] = w.effects
	}
	if err := g.Commit(); err != nil {
		// Commit fails only for a spoilt group, which returned above.
		panic(err)
	}
	f.groupedEntries.Add(int64(len(logs)))
	for k, l := range logs {
		for _, fn := range effects[k] {
			fn()
		}
		f.publishEvents(structs.MessageType(l.Data[0]), l.Index)
	}
}

func (f *FSM) groupEntry(w *entryWriter, l *raft.Log) error {
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
	panic("groupEntry: not a groupable entry")
}
