package fsm

import (
	"sync"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/nomad/eventbroker"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// eventPublisher turns what each applied Raft entry committed into event
// stream events. The state store hands over the changes of each commit;
// once the entry is applied they become one batch, with the entry's index
// and Nomad's event type for its message type, published to the broker,
// which never blocks.
type eventPublisher struct {
	stream *eventbroker.Broker // nil: the event stream is off

	pendingMu sync.Mutex
	pending   []pendingChanges
}

// pendingChanges are changes a commit made for the entry at index; a
// group write commits several entries' at once.
type pendingChanges struct {
	index   uint64
	changes memdb.Changes
}

// SetEventBroker publishes events to b (nil: none). Call it before Raft
// starts.
func (f *FSM) SetEventBroker(b *eventbroker.Broker) {
	f.stream = b
	f.wireEvents(f.State())
}

// EventBroker returns the broker events are published to, nil when the
// event stream is disabled.
func (f *FSM) EventBroker() *eventbroker.Broker { return f.stream }

// wireEvents makes st report its commits, when there is a broker to
// publish them to; change tracking costs memory on every write.
func (f *FSM) wireEvents(st *state.StateStore) {
	if f.stream == nil {
		st.SetChangeFeed(nil)
		return
	}
	st.SetChangeFeed(f.collectChanges)
}

func (f *FSM) collectChanges(index uint64, changes memdb.Changes) {
	f.pendingMu.Lock()
	f.pending = append(f.pending, pendingChanges{index: index, changes: changes})
	f.pendingMu.Unlock()
}

// publishEvents publishes what was committed for the entry at index. An
// entry that failed committed nothing, or only what its earlier writes
// did. Changes for later entries (a group commit writes several at once)
// wait for theirs.
func (f *FSM) publishEvents(msgType structs.MessageType, index uint64) {
	f.pendingMu.Lock()
	var changes memdb.Changes
	rest := f.pending[:0]
	for _, p := range f.pending {
		if p.index <= index {
			changes = append(changes, p.changes...)
		} else {
			rest = append(rest, p)
		}
	}
	clear(f.pending[len(rest):])
	f.pending = rest
	f.pendingMu.Unlock()
	if f.stream == nil || len(changes) == 0 {
		return
	}
	f.stream.Publish(&structs.Events{Index: index, Events: state.EventsFromChanges(msgType, index, changes)})
}

// restoredEvents drops the buffered events when a snapshot replaces the
// state: the entries up to the snapshot were not applied here one by one,
// so subscribers reading across them are told they missed events.
func (f *FSM) restoredEvents(st *state.StateStore) {
	if f.stream == nil {
		return
	}
	idx, err := st.LatestIndex()
	if err != nil {
		f.logger.Warn("event stream: cannot read the restored index; dropping buffered events", "error", err)
	}
	f.stream.Reset(idx)
}

// CloseEvents ends every event stream subscription (server shutdown).
func (f *FSM) CloseEvents() {
	if f.stream != nil {
		f.stream.Close()
	}
}
