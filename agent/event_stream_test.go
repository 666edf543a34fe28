package agent

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

// The acceptance scenario: a raw_exec task killed at its max_run_duration
// deadline shows up on the event stream as an alloc update marked
// Timeout, with the reason.
func TestEventStream_MaxRunDurationTimeout(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := c.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicAllocation: {"mrd-events"}}, 0, nil)
	must.NoError(t, err)

	register(t, c, maxRunJob("mrd-events", "batch", 2*time.Second, "exec sleep 600"))

	var sawRunning bool
	for {
		var batch *api.Events
		select {
		case batch = <-stream:
		case <-ctx.Done():
			t.Fatal("no timed-out alloc event within a minute")
		}
		must.NotNil(t, batch)
		must.NoError(t, batch.Err)
		for _, ev := range batch.Events {
			must.Eq(t, api.TopicAllocation, ev.Topic)
			alloc, err := ev.Allocation()
			must.NoError(t, err)
			must.Eq(t, "mrd-events", alloc.JobID)
			must.Eq(t, batch.Index, ev.Index)
			timeout, _ := ev.Payload["Timeout"].(bool)
			switch alloc.ClientStatus {
			case "running":
				sawRunning = true
				must.False(t, timeout, must.Sprint("a running alloc is not timed out"))
			case "complete":
				must.True(t, sawRunning, must.Sprint("the alloc ran before it timed out"))
				must.Eq(t, "AllocationUpdated", ev.Type)
				must.True(t, timeout)
				must.Eq(t, maxRunReason, ev.Payload["TimeoutReason"])
				must.Eq(t, maxRunReason, alloc.ClientDescription)
				return
			}
		}
	}
}

func TestEventStream_BadRequests(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	cases := []struct {
		name     string
		query    string
		wantCode int
		wantBody string
	}{
		{"two colons", "topic=Evaluation:::*", 400, "Invalid key value pair for topic, topic: Evaluation:::*"},
		{"unknown topic", "topic=Service", 400, `topic "Service" is not supported`},
		{"empty key", "topic=Job:", 400, "has an empty key"},
		{"bad index", "index=-1", 400, "Unable to parse index"},
		{"other region", "region=mars", 400, `No path to region "mars"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Get(a.HTTPAddr() + "/v1/event/stream?" + tc.query)
			must.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			must.Eq(t, tc.wantCode, resp.StatusCode)
			must.StrContains(t, string(body), tc.wantBody)
		})
	}
	resp, err := http.Post(a.HTTPAddr()+"/v1/event/stream", "application/json", strings.NewReader("{}"))
	must.NoError(t, err)
	resp.Body.Close()
	must.Eq(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

// A subscriber to a topic nomadq never produces (Deployment) is served,
// and a key filter passes only the object it names.
func TestEventStream_KeysAndNamespaces(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, a)
	_, err := c.Namespaces().Register(&api.Namespace{Name: "prod"}, nil)
	must.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	deployments, err := c.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicDeployment: {"*"}}, 0, nil)
	must.NoError(t, err)
	prodOnly, err := c.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicJob: {"*"}}, 0, &api.QueryOptions{Namespace: "prod"})
	must.NoError(t, err)
	oneJob, err := c.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicJob: {"second"}}, 0, &api.QueryOptions{Namespace: "*"})
	must.NoError(t, err)

	for _, j := range []struct{ id, ns string }{{"first", "default"}, {"second", "prod"}} {
		job := maxRunJob(j.id, "batch", time.Minute, "exit 0")
		job.Namespace = &j.ns
		_, _, err := c.Jobs().Register(job, nil)
		must.NoError(t, err)
	}
	for name, ch := range map[string]<-chan *api.Events{"namespace prod": prodOnly, "key second": oneJob} {
		batch := <-ch
		must.NoError(t, batch.Err, must.Sprint(name))
		job, err := batch.Events[0].Job()
		must.NoError(t, err)
		must.Eq(t, "second", *job.ID, must.Sprint(name))
		must.Eq(t, "JobRegistered", batch.Events[0].Type)
	}
	select {
	case ev := <-deployments:
		t.Fatalf("a deployment event: %+v", ev)
	default:
	}
}
