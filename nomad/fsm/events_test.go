package fsm

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/nomad/eventbroker"
	"github.com/nomadq/nomadq/structs"
)

func TestFSM_PublishesCommittedChangesWithTheRaftIndex(t *testing.T) {
	f := testFSM(t)
	b := eventbroker.New(10)
	f.SetEventBroker(b)
	sub := b.Subscribe(eventbroker.SubscribeRequest{Topics: map[structs.Topic][]string{"*": {"*"}}, Namespace: "*"})

	node := mockNode(structs.GenerateUUID())
	mustApply(t, f, 7, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	job := mockJob("web")
	mustApply(t, f, 9, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: mock.JobEval(job)})
	// A refused entry commits nothing and publishes nothing.
	err, _ := apply(t, f, 10, structs.NamespaceDeleteRequestType, &structs.NamespaceDeleteRequest{Namespaces: []string{"default"}}).(error)
	must.Error(t, err)

	first, err := sub.Next(context.Background())
	must.NoError(t, err)
	must.Eq(t, 7, first.Index)
	must.SliceLen(t, 1, first.Events)
	must.Eq(t, structs.TypeNodeRegistration, first.Events[0].Type)

	second, err := sub.Next(context.Background())
	must.NoError(t, err)
	must.Eq(t, 9, second.Index)
	topics := map[structs.Topic]string{}
	for _, ev := range second.Events {
		topics[ev.Topic] = ev.Type
		must.Eq(t, 9, ev.Index)
	}
	must.Eq(t, map[structs.Topic]string{structs.TopicJob: structs.TypeJobRegistered, structs.TopicEvaluation: structs.TypeJobRegistered}, topics)
	// With nothing more held, Next returns at once on a canceled context.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = sub.Next(done)
	must.ErrorIs(t, err, context.Canceled, must.Sprint("the refused entry published nothing"))
}

// A subscriber that never reads cannot hold up Raft: every apply returns,
// and the subscriber is dropped once its unread events leave the buffer.
func TestFSM_SlowSubscriberDoesNotBlockApplies(t *testing.T) {
	f := testFSM(t)
	b := eventbroker.New(4)
	f.SetEventBroker(b)
	slow := b.Subscribe(eventbroker.SubscribeRequest{Topics: map[structs.Topic][]string{"*": {"*"}}, Namespace: "*"})

	node := mockNode(structs.GenerateUUID())
	for i := uint64(1); i <= 50; i++ {
		mustApply(t, f, i, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	}
	n, err := f.State().NodeByID(nil, node.ID)
	must.NoError(t, err)
	must.Eq(t, 50, n.ModifyIndex, must.Sprint("all 50 entries were applied"))

	_, err = slow.Next(context.Background())
	var dropped *eventbroker.SubscriptionDroppedError
	must.ErrorAs[*eventbroker.SubscriptionDroppedError](t, err, &dropped)
	must.Eq(t, 1, dropped.Next)
	must.Eq(t, 46, dropped.Dropped)
}

func TestFSM_RestoreDropsBufferedEvents(t *testing.T) {
	f := testFSM(t)
	b := eventbroker.New(10)
	f.SetEventBroker(b)
	mustApply(t, f, 3, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: mockNode(structs.GenerateUUID())})
	sub := b.Subscribe(eventbroker.SubscribeRequest{Topics: map[structs.Topic][]string{"*": {"*"}}, Namespace: "*", Index: 4})

	other := testFSM(t)
	mustApply(t, other, 20, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: mockNode(structs.GenerateUUID())})
	snap, err := other.Snapshot()
	must.NoError(t, err)
	var sink memSink
	must.NoError(t, snap.Persist(&sink))
	must.NoError(t, f.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))

	_, err = sub.Next(context.Background())
	must.ErrorAs[*eventbroker.SubscriptionDroppedError](t, err, new(*eventbroker.SubscriptionDroppedError))

	// The restored store reports its commits too.
	fresh := b.Subscribe(eventbroker.SubscribeRequest{Topics: map[structs.Topic][]string{"*": {"*"}}, Namespace: "*"})
	mustApply(t, f, 21, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: mockNode(structs.GenerateUUID())})
	ev, err := fresh.Next(context.Background())
	must.NoError(t, err)
	must.Eq(t, 21, ev.Index)
}

// A plan's entry that also completes its eval announces the allocs as a
// plan result and the eval as an eval update, as the separate write did.
func TestFSM_PlanWithVerdictPublishesAnEvalUpdate(t *testing.T) {
	f := testFSM(t)
	b := eventbroker.New(10)
	f.SetEventBroker(b)
	node := mockNode(structs.GenerateUUID())
	mustApply(t, f, 5, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	job := mockJob("web")
	eval := mock.JobEval(job)
	mustApply(t, f, 6, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval})
	sub := b.Subscribe(eventbroker.SubscribeRequest{Topics: map[structs.Topic][]string{"*": {"*"}}, Namespace: "*", Index: 7})

	done := eval.Copy()
	done.Status = structs.EvalStatusComplete
	alloc := mock.Alloc(job, node, eval.ID)
	mustApply(t, f, 7, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocsUpdated: []*structs.Allocation{alloc}, Job: job, EvalID: eval.ID, Evals: []*structs.Evaluation{done},
	})

	stored, err := f.State().EvalByID(nil, eval.ID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusComplete, stored.Status)
	must.Eq(t, 7, stored.ModifyIndex)

	got, err := sub.Next(context.Background())
	must.NoError(t, err)
	must.Eq(t, 7, got.Index)
	types := map[structs.Topic]string{}
	for _, ev := range got.Events {
		types[ev.Topic] = ev.Type
	}
	must.Eq(t, map[structs.Topic]string{
		structs.TopicAllocation: structs.TypePlanResult,
		structs.TopicEvaluation: structs.TypeEvalUpdated,
		structs.TopicJob:        structs.TypePlanResult,
	}, types)
}
