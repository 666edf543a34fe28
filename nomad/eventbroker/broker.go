package eventbroker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/nomadq/nomadq/structs"
)

// DefaultBufferSize is how many Raft entries' events the broker
// keeps, Nomad's default event_buffer_size.
const DefaultBufferSize = 100

// ErrClosed ends subscriptions when the server shuts down.
var ErrClosed = errors.New("event stream closed: the server is shutting down")

// SubscriptionDroppedError ends a subscription that fell behind: events
// it had not read yet left the bounded buffer (a slow reader, or a
// snapshot restore that skipped over them).
type SubscriptionDroppedError struct {
	// Next is the first index the subscriber had not read; Dropped the
	// newest index the buffer no longer holds.
	Next, Dropped uint64
}

// Error names the indexes the subscriber missed and tells it to
// resubscribe.
func (e *SubscriptionDroppedError) Error() string {
	return fmt.Sprintf("subscription closed by server: the client fell behind and events from index %d to %d left the buffer before it read them; resubscribe", e.Next, e.Dropped)
}

// Broker keeps the events of the last committed Raft entries in a
// bounded ring and hands them to subscribers. Publishing never waits for
// a subscriber: each subscriber keeps its own position and reads at its
// own pace; one that falls further behind than the ring holds is dropped
// with a SubscriptionDroppedError.
type Broker struct {
	mu      sync.Mutex
	ring    []*structs.Events // oldest first, at most size
	size    int
	dropped uint64        // newest index that left the ring, 0 for none
	notify  chan struct{} // closed and replaced on every publish
	closed  bool
}

// New returns a broker that keeps the events of size entries
// (DefaultBufferSize when size <= 0).
func New(size int) *Broker {
	if size <= 0 {
		size = DefaultBufferSize
	}
	return &Broker{size: size, notify: make(chan struct{})}
}

// Publish adds the events of one committed entry. It never blocks on
// subscribers.
func (b *Broker) Publish(events *structs.Events) {
	if events == nil || len(events.Events) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	if len(b.ring) == b.size {
		b.dropped = b.ring[0].Index
		b.ring[0] = nil
		b.ring = b.ring[1:]
	}
	b.ring = append(b.ring, events)
	close(b.notify)
	b.notify = make(chan struct{})
}

// Reset forgets every event up to index: after a snapshot restore the
// entries before it were never applied here, so no subscriber may assume
// it saw them.
func (b *Broker) Reset(index uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ring = nil
	b.dropped = max(b.dropped, index)
	close(b.notify)
	b.notify = make(chan struct{})
}

// Close ends every subscription with ErrClosed.
func (b *Broker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		close(b.notify)
	}
}

// SubscribeRequest selects events: per topic the keys wanted ("*": all
// of the topic; topic "*": every topic), the namespace ("*": all; events
// of objects outside namespaces always pass) and the index to start from.
type SubscribeRequest struct {
	// Topics maps each topic wanted to the keys wanted in it.
	Topics map[structs.Topic][]string
	// Namespace is the namespace whose events pass.
	Namespace string
	// Index is the Raft index to start reading at.
	Index uint64
	// Allow, when set, passes each selected event once more: the
	// subscriber's ACL at the time the event is read.
	Allow func(*structs.Event) bool
}

// Subscription reads a broker's events in order from its position.
type Subscription struct {
	b    *Broker
	req  SubscribeRequest
	next uint64 // first index not read yet
}

// Subscribe starts reading at req.Index: the first held entry at or after
// it, or the oldest held one when it has left the buffer (0: the oldest).
func (b *Broker) Subscribe(req SubscribeRequest) *Subscription {
	b.mu.Lock()
	defer b.mu.Unlock()
	return &Subscription{b: b, req: req, next: max(req.Index, b.dropped+1)}
}

// Next returns the next entry's events that the subscription selects,
// waiting for one until ctx ends. Entries with nothing selected are
// skipped.
func (s *Subscription) Next(ctx context.Context) (*structs.Events, error) {
	for {
		b := s.b
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return nil, ErrClosed
		}
		if s.next <= b.dropped {
			err := &SubscriptionDroppedError{Next: s.next, Dropped: b.dropped}
			b.mu.Unlock()
			return nil, err
		}
		i := sort.Search(len(b.ring), func(i int) bool { return b.ring[i].Index >= s.next })
		if i == len(b.ring) {
			wait := b.notify
			b.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		batch := b.ring[i]
		b.mu.Unlock()

		s.next = batch.Index + 1
		if out := s.filter(batch); out != nil {
			return out, nil
		}
	}
}

// filter returns the batch's events the subscription selects, nil for
// none. Held batches are shared, so it builds a new one.
func (s *Subscription) filter(batch *structs.Events) *structs.Events {
	var keep []structs.Event
	for _, ev := range batch.Events {
		if s.selects(&ev) {
			keep = append(keep, ev)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	return &structs.Events{Index: batch.Index, Events: keep}
}

func (s *Subscription) selects(ev *structs.Event) bool {
	if ev.Namespace != "" && s.req.Namespace != "*" && ev.Namespace != s.req.Namespace {
		return false
	}
	keys := append(slices.Clone(s.req.Topics[structs.TopicAll]), s.req.Topics[ev.Topic]...)
	for _, k := range keys {
		if k == "*" || k == ev.Key || slices.Contains(ev.FilterKeys, k) {
			return s.req.Allow == nil || s.req.Allow(ev)
		}
	}
	return false
}
