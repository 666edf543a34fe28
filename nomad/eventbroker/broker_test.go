package eventbroker

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func batch(index uint64, events ...structs.Event) *structs.Events {
	for i := range events {
		events[i].Index = index
	}
	return &structs.Events{Index: index, Events: events}
}

func jobEvent(ns, id string) structs.Event {
	return structs.Event{Topic: structs.TopicJob, Type: structs.TypeJobRegistered, Key: id, Namespace: ns}
}

func nodeEvent(id string) structs.Event {
	return structs.Event{Topic: structs.TopicNode, Type: structs.TypeNodeRegistration, Key: id}
}

func allocEvent(ns, id, jobID string) structs.Event {
	return structs.Event{Topic: structs.TopicAllocation, Type: structs.TypeAllocationUpdated, Key: id, Namespace: ns, FilterKeys: []string{jobID, ""}}
}

// indexes reads every batch the subscription has now and returns their
// indexes and keys.
func readAll(t *testing.T, sub *Subscription) ([]uint64, []string) {
	t.Helper()
	var idx []uint64
	var keys []string
	for {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // only what is already there
		ev, err := sub.Next(ctx)
		if errors.Is(err, context.Canceled) {
			return idx, keys
		}
		must.NoError(t, err)
		idx = append(idx, ev.Index)
		for _, e := range ev.Events {
			keys = append(keys, e.Key)
		}
	}
}

func TestEventBroker_Selection(t *testing.T) {
	b := New(10)
	b.Publish(batch(3, jobEvent("default", "web"), jobEvent("prod", "api")))
	b.Publish(batch(5, nodeEvent("n1")))
	b.Publish(batch(6, allocEvent("default", "a1", "web"), allocEvent("default", "a2", "db")))
	b.Publish(batch(8, jobEvent("default", "db")))

	cases := []struct {
		name      string
		req       SubscribeRequest
		wantIndex []uint64
		wantKeys  []string
	}{
		{"everything in default", SubscribeRequest{Topics: map[structs.Topic][]string{"*": {"*"}}, Namespace: "default"},
			[]uint64{3, 5, 6, 8}, []string{"web", "n1", "a1", "a2", "db"}},
		{"every namespace", SubscribeRequest{Topics: map[structs.Topic][]string{"Job": {"*"}}, Namespace: "*"},
			[]uint64{3, 8}, []string{"web", "api", "db"}},
		{"one job by key", SubscribeRequest{Topics: map[structs.Topic][]string{"Job": {"db"}}, Namespace: "default"},
			[]uint64{8}, []string{"db"}},
		{"allocs by their job (filter key)", SubscribeRequest{Topics: map[structs.Topic][]string{"Allocation": {"web"}}, Namespace: "default"},
			[]uint64{6}, []string{"a1"}},
		{"nodes have no namespace and always pass", SubscribeRequest{Topics: map[structs.Topic][]string{"Node": {"*"}}, Namespace: "prod"},
			[]uint64{5}, []string{"n1"}},
		{"resume at an index", SubscribeRequest{Topics: map[structs.Topic][]string{"*": {"*"}}, Namespace: "default", Index: 6},
			[]uint64{6, 8}, []string{"a1", "a2", "db"}},
		{"resume between indexes", SubscribeRequest{Topics: map[structs.Topic][]string{"*": {"*"}}, Namespace: "default", Index: 4},
			[]uint64{5, 6, 8}, []string{"n1", "a1", "a2", "db"}},
		{"deployments never come", SubscribeRequest{Topics: map[structs.Topic][]string{"Deployment": {"*"}}, Namespace: "*"},
			nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			idx, keys := readAll(t, b.Subscribe(tc.req))
			must.Eq(t, tc.wantIndex, idx)
			must.Eq(t, tc.wantKeys, keys)
		})
	}
}

func TestEventBroker_SlowSubscriberIsDroppedAndPublishNeverWaits(t *testing.T) {
	b := New(3)
	all := SubscribeRequest{Topics: map[structs.Topic][]string{"*": {"*"}}, Namespace: "*"}
	slow := b.Subscribe(all)
	b.Publish(batch(1, nodeEvent("n1")))
	first, err := slow.Next(context.Background())
	must.NoError(t, err)
	must.Eq(t, 1, first.Index)

	// The slow reader stops reading; the publisher goes on well past the
	// buffer. Publish returns every time: nothing waits for readers.
	for i := uint64(2); i <= 10; i++ {
		b.Publish(batch(i, nodeEvent("n1")))
	}
	_, err = slow.Next(context.Background())
	var dropped *SubscriptionDroppedError
	must.ErrorAs[*SubscriptionDroppedError](t, err, &dropped)
	must.Eq(t, 2, dropped.Next)
	must.Eq(t, 7, dropped.Dropped)
	must.StrContains(t, err.Error(), "resubscribe")

	// A new subscription from index 0 starts at the oldest held entry.
	idx, _ := readAll(t, b.Subscribe(all))
	must.Eq(t, []uint64{8, 9, 10}, idx)
}

func TestEventBroker_ResetAndClose(t *testing.T) {
	b := New(10)
	all := SubscribeRequest{Topics: map[structs.Topic][]string{"*": {"*"}}, Namespace: "*"}
	sub := b.Subscribe(all)
	b.Publish(batch(1, nodeEvent("n1")))
	b.Reset(40) // a snapshot restore up to 40
	_, err := sub.Next(context.Background())
	var dropped *SubscriptionDroppedError
	must.ErrorAs[*SubscriptionDroppedError](t, err, &dropped)

	later := b.Subscribe(all)
	b.Close()
	_, err = later.Next(context.Background())
	must.ErrorIs(t, err, ErrClosed)
}

func TestEventBroker_NextWaitsForPublish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(10)
		sub := b.Subscribe(SubscribeRequest{Topics: map[structs.Topic][]string{"Job": {"*"}}, Namespace: "default"})
		got := make(chan *structs.Events, 1)
		go func() {
			ev, err := sub.Next(context.Background())
			must.NoError(t, err)
			got <- ev
		}()
		synctest.Wait()
		// An entry the subscription does not select wakes it but is
		// skipped.
		b.Publish(batch(4, nodeEvent("n1")))
		synctest.Wait()
		must.Eq(t, 0, len(got))
		b.Publish(batch(5, jobEvent("default", "web")))
		ev := <-got
		must.Eq(t, 5, ev.Index)

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := sub.Next(ctx)
		must.ErrorIs(t, err, context.DeadlineExceeded)
	})
}
