package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
)

// TestHTTP_BlockingQueriesPerClient holds the address's allowance of
// blocking queries: the next is answered 429 naming the limit before it
// waits, a request that does not block still goes through, and a freed
// slot takes a blocking query again.
func TestHTTP_BlockingQueriesPerClient(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Limits.HTTPMaxBlockingQueriesPerClient = 2 })
	base := a.HTTPAddr()
	gate := a.httpServer.Handler.(*httpHandler).gates.blocking
	held := func() int {
		gate.mu.Lock()
		defer gate.mu.Unlock()
		return gate.held["127.0.0.1"]
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan struct{}, 2)
	for range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			// The slot is the query's until it ends on the server, even
			// when its caller went away, so it waits only a little.
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/jobs?index=1000000&wait=10s", nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return held() == 2 }),
		wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)))

	code, body := httpGet(t, base+"/v1/jobs?index=1000000&wait=5m")
	must.Eq(t, http.StatusTooManyRequests, code)
	must.StrContains(t, body, "Too many concurrent blocking queries from this address: limits.http_max_blocking_queries_per_client is 2")
	code, _ = httpGet(t, base+"/v1/jobs")
	must.Eq(t, http.StatusOK, code)

	<-done
	<-done
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return held() == 0 }),
		wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)))
	code, _ = httpGet(t, base+"/v1/jobs?index=1&wait=10ms")
	must.Eq(t, http.StatusOK, code)
}

// TestRequestGates_LogStreams counts log streams per address apart from
// blocking queries and other addresses.
func TestRequestGates_LogStreams(t *testing.T) {
	g := newRequestGates(1, 2)
	req := func(addr, target string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.RemoteAddr = addr
		return r
	}
	var releases []func()
	for range 2 {
		rel, err := g.admit(req("10.0.0.1:1000", "/v1/client/fs/logs/abc?follow=true&task=t"))
		must.NoError(t, err)
		releases = append(releases, rel)
	}
	_, err := g.admit(req("10.0.0.1:1001", "/v1/client/fs/stream/abc?path=x"))
	must.ErrorContains(t, err, "Too many concurrent log streams from this address: limits.http_max_log_streams_per_client is 2")
	// Another address, and a blocking query from the same one, are not
	// counted against it.
	_, err = g.admit(req("10.0.0.2:1000", "/v1/client/fs/logs/abc"))
	must.NoError(t, err)
	_, err = g.admit(req("10.0.0.1:1002", "/v1/jobs?index=5"))
	must.NoError(t, err)
	releases[0]()
	releases[0]() // a second release frees nothing more
	_, err = g.admit(req("10.0.0.1:1003", "/v1/client/fs/logs/abc"))
	must.NoError(t, err)
	_, err = g.admit(req("10.0.0.1:1004", "/v1/client/fs/logs/abc"))
	must.Error(t, err)
}
