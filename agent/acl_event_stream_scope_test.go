package agent

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

// streamUntil reads batches until one holds an event for which stop is
// true (returned), failing on a stream error or after a minute. Every
// event read is passed to seen.
func streamUntil(t *testing.T, stream <-chan *api.Events, seen func(api.Event), stop func(api.Event) bool) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case batch, ok := <-stream:
			must.True(t, ok, must.Sprint("the stream ended early"))
			must.NoError(t, batch.Err)
			for _, ev := range batch.Events {
				seen(ev)
				if stop(ev) {
					return
				}
			}
		case <-timeout:
			t.Fatal("the awaited event did not come")
		}
	}
}

// streamEnds waits for the stream to end, as Nomad's does over HTTP: an
// EOF, then the channel closes. Events before the end are allowed.
func streamEnds(t *testing.T, stream <-chan *api.Events, within time.Duration) {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case batch, ok := <-stream:
			if !ok {
				return
			}
			if batch.Err != nil {
				must.True(t, errors.Is(batch.Err, io.EOF) || errors.Is(batch.Err, io.ErrUnexpectedEOF),
					must.Sprintf("the stream ends with EOF, got %v", batch.Err))
				_, open := <-stream
				must.False(t, open)
				return
			}
		case <-timeout:
			t.Fatalf("the stream is still open after %s", within)
		}
	}
}

func jobEvent(ev api.Event) string {
	if j, err := ev.Job(); err == nil && j != nil && j.ID != nil {
		return *j.ID
	}
	return ""
}

// TestACL_EventStreamFiltersPerEventAndEndsOnRevocation: a stream over
// every namespace carries only the events of namespaces the token may
// read, those of a namespace created after it started included; a
// variable stream only the paths the token may list; and a stream ends
// at once when its token is deleted, when it expires and when its
// policy stops granting the subscription.
func TestACL_EventStreamFiltersPerEventAndEndsOnRevocation(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.ACL.Enabled = true })
	root := apiClient(t, a)
	boot, _, err := root.ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	root.SetSecretID(boot.SecretID)
	_, err = root.Namespaces().Register(&api.Namespace{Name: "a"}, nil)
	must.NoError(t, err)
	watcher := tokenClient(t, a, root, "watcher", `
namespace "*" {
  policy = "read"
  variables {
    path "app/*" { capabilities = ["list"] }
  }
}
namespace "secret-*" { policy = "deny" }`)
	tokens, _, err := root.ACLTokens().List(nil)
	must.NoError(t, err)
	var accessor string
	for _, tok := range tokens {
		if tok.Name == "watcher" {
			accessor = tok.AccessorID
		}
	}
	must.NotEq(t, "", accessor)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	all := &api.QueryOptions{Namespace: "*"}
	jobs, err := watcher.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicJob: {"*"}}, 0, all)
	must.NoError(t, err)
	vars, err := watcher.EventStream().Stream(ctx, map[api.Topic][]string{api.Topic("Variable"): {"*"}}, 0, nil)
	must.NoError(t, err)

	// A namespace the token may not read, made after the stream started.
	_, err = root.Namespaces().Register(&api.Namespace{Name: "secret-x"}, nil)
	must.NoError(t, err)
	for _, ns := range []string{"secret-x", "a"} {
		job := unplaceableJob("job-"+ns, "batch", nil)
		job.Namespace = new(ns)
		_, _, err := root.Jobs().Register(job, &api.WriteOptions{Namespace: ns})
		must.NoError(t, err)
	}
	var seenJobs []string
	streamUntil(t, jobs, func(ev api.Event) { seenJobs = append(seenJobs, jobEvent(ev)) },
		func(ev api.Event) bool { return jobEvent(ev) == "job-a" })
	must.SliceNotContains(t, seenJobs, "job-secret-x", must.Sprint("an event of a namespace the token may not read"))

	for _, path := range []string{"ops/secret", "app/db"} {
		_, _, err := root.Variables().Create(&api.Variable{Path: path, Items: api.VariableItems{"k": "v"}}, nil)
		must.NoError(t, err)
	}
	var seenVars []string
	streamUntil(t, vars, func(ev api.Event) { seenVars = append(seenVars, ev.Key) },
		func(ev api.Event) bool { return ev.Key == "app/db" })
	must.SliceNotContains(t, seenVars, "ops/secret", must.Sprint("a variable path the token may not list"))

	// Deleting the token ends both streams, well before the 10s heartbeat.
	_, err = root.ACLTokens().Delete(accessor, nil)
	must.NoError(t, err)
	streamEnds(t, jobs, 5*time.Second)
	streamEnds(t, vars, 5*time.Second)

	// A token that expires ends its stream at its expiry (an expiry
	// time, since a TTL must be a minute at least).
	expiry := time.Now().Add(3 * time.Second)
	short, _, err := root.ACLTokens().Create(&api.ACLToken{Name: "short", Type: "client", Policies: []string{"watcher"}, ExpirationTime: &expiry}, nil)
	must.NoError(t, err)
	sc := apiClient(t, a)
	sc.SetSecretID(short.SecretID)
	expiring, err := sc.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicJob: {"*"}}, 0, nil)
	must.NoError(t, err)
	streamEnds(t, expiring, 30*time.Second)
	_, _, err = sc.Jobs().List(nil)
	must.ErrorContains(t, err, "ACL token expired")

	// A policy that stops granting the subscription ends it too.
	kept := tokenClient(t, a, root, "kept", `namespace "default" { policy = "read" }`)
	narrowed, err := kept.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicJob: {"*"}}, 0, nil)
	must.NoError(t, err)
	_, err = root.ACLPolicies().Upsert(&api.ACLPolicy{Name: "kept", Rules: `namespace "a" { policy = "read" }`}, nil)
	must.NoError(t, err)
	streamEnds(t, narrowed, 5*time.Second)
}
