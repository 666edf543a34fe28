package fsm

import (
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/nomadq/nomadq/structs"
)

// ErrCorruptEntry is matched (errors.Is) by the error of a committed
// entry the FSM cannot decode: an unknown message type without the
// ignore flag, or a body that is not its type's request. Every server
// must apply every committed entry, so such an entry is not answered like
// a refused write: the FSM stops (Fault) and applies nothing after it.
var ErrCorruptEntry = errors.New("raft entry does not decode")

// CorruptEntryError is the fault of an entry that does not decode: where
// it is in the log, its message type byte and why it does not decode.
type CorruptEntryError struct {
	Index uint64
	Term  uint64
	// Type is the entry's first byte as written, ignore flag included.
	Type uint8
	Err  error
}

func (e *CorruptEntryError) Error() string {
	return fmt.Sprintf("raft log entry at index %d (term %d) does not decode: %v", e.Index, e.Term, e.Err)
}

// Is makes the error match ErrCorruptEntry.
func (e *CorruptEntryError) Is(target error) bool { return target == ErrCorruptEntry }

func (e *CorruptEntryError) Unwrap() error { return e.Err }

// corrupt marks why an entry does not decode; Apply turns it into a
// CorruptEntryError naming the entry, and a fault.
type corrupt struct{ err error }

func (c *corrupt) Error() string        { return c.err.Error() }
func (c *corrupt) Unwrap() error        { return c.err }
func (c *corrupt) Is(target error) bool { return target == ErrCorruptEntry }

// fault is the FSM's stop: the first entry that did not decode. Once it
// is set the FSM applies no entry, takes no snapshot and restores none,
// so the state it holds is never written anywhere as if it were whole.
type fault struct {
	once sync.Once
	mu   sync.Mutex
	ch   chan struct{}
	err  *CorruptEntryError
}

func (f *FSM) faultCh() chan struct{} {
	f.fault.once.Do(func() { f.fault.ch = make(chan struct{}) })
	return f.fault.ch
}

// Faulted is closed when the FSM met a committed entry it cannot decode;
// Fault returns which. The server then stops: going on would leave this
// server's state different from every other's, for ever.
func (f *FSM) Faulted() <-chan struct{} { return f.faultCh() }

// Fault returns the entry that stopped the FSM, nil while it runs.
func (f *FSM) Fault() *CorruptEntryError {
	select {
	case <-f.faultCh():
		return f.fault.err
	default:
		return nil
	}
}

// Apply applies one log entry and returns nil or the error that the
// caller of raftApply receives. An entry that does not decode stops the
// FSM (see Faulted): its answer and the answer to every later entry is an
// error matching ErrCorruptEntry, and none of them is applied.
func (f *FSM) Apply(l *raft.Log) any {
	if err := f.Fault(); err != nil {
		return f.refused(l, err)
	}
	resp := f.applyEntry(l)
	if err, ok := resp.(error); ok && errors.Is(err, ErrCorruptEntry) {
		return f.stop(l, err)
	}
	return resp
}

// stop records the fault of entry l.
func (f *FSM) stop(l *raft.Log, err error) error {
	var typ uint8
	if len(l.Data) > 0 {
		typ = l.Data[0]
	}
	var c *corrupt
	if errors.As(err, &c) {
		err = c.err
	}
	cerr := &CorruptEntryError{Index: l.Index, Term: l.Term, Type: typ, Err: err}
	ch := f.faultCh()
	f.fault.mu.Lock()
	select {
	case <-ch:
	default:
		f.fault.err = cerr
		close(ch)
	}
	f.fault.mu.Unlock()
	f.logger.Error("stopping: a committed raft entry does not decode; no later entry is applied",
		"index", l.Index, "term", l.Term, "type", typ, "error", err)
	return cerr
}

// refused answers an entry that comes after the fault.
func (f *FSM) refused(l *raft.Log, cause *CorruptEntryError) error {
	return fmt.Errorf("fsm: entry at index %d not applied: stopped at index %d: %w", l.Index, cause.Index, cause)
}

// errFaulted is the error of a snapshot or restore asked of a stopped
// FSM.
func (f *FSM) errFaulted() error {
	if err := f.Fault(); err != nil {
		return fmt.Errorf("fsm: stopped at index %d: %w", err.Index, err)
	}
	return nil
}

// notDecodable marks err, the reason a body does not decode, as a fault.
func notDecodable(msgType structs.MessageType, err error) error {
	return &corrupt{err: fmt.Errorf("%s body: %w", msgType, err)}
}

// unknownType is the fault of an entry whose type this server does not
// know and that is not flagged ignorable.
func unknownType(msgType structs.MessageType) error {
	return &corrupt{err: fmt.Errorf("unknown message type %d", uint8(msgType))}
}
