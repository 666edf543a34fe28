package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// waitFrame reads frames until one holds want, failing after 10s.
func waitFrame(t *testing.T, frames <-chan *api.StreamFrame, errCh <-chan error, want string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case f := <-frames:
			if f != nil && strings.Contains(string(f.Data), want) {
				return string(f.Data)
			}
		case err := <-errCh:
			t.Fatalf("monitor stream: %v", err)
		case <-timeout:
			t.Fatalf("no log line with %q", want)
		}
	}
}

func TestAgentMonitor_StreamsAtTheAskedLevel(t *testing.T) {
	// The agent logs at WARN; the monitor still sees DEBUG lines.
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	stop := make(chan struct{})
	defer close(stop)
	frames, errCh := c.Agent().Monitor(stop, &api.QueryOptions{Params: map[string]string{"log_level": "debug"}})
	_, err := c.Agent().Region()
	must.NoError(t, err)
	waitFrame(t, frames, errCh, "[DEBUG]")

	// Aimed at this agent's own node, as `nomad monitor -node-id` does.
	stop2 := make(chan struct{})
	defer close(stop2)
	frames, errCh = c.Agent().Monitor(stop2, &api.QueryOptions{Params: map[string]string{"log_level": "debug", "log_json": "true", "node_id": a.client.NodeID()}})
	_, err = c.Agent().Region()
	must.NoError(t, err)
	line := waitFrame(t, frames, errCh, "request complete")
	first, _, _ := strings.Cut(line, "\n")
	var entry map[string]any
	must.NoError(t, json.Unmarshal([]byte(first), &entry), must.Sprint(first))
	must.Eq(t, "debug", entry["@level"])

	// At INFO the same request's DEBUG line is not sent.
	stop3 := make(chan struct{})
	defer close(stop3)
	frames, errCh = c.Agent().Monitor(stop3, &api.QueryOptions{Params: map[string]string{"log_level": "info"}})
	_, err = c.Agent().Region()
	must.NoError(t, err)
	a.logger.Info("marker after the request")
	must.StrNotContains(t, waitFrame(t, frames, errCh, "marker after the request"), "[DEBUG]")
}

func TestAgentMonitor_Plain(t *testing.T) {
	a := NewTestAgent(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.HTTPAddr()+"/v1/agent/monitor?log_level=warn&plain=true", nil)
	must.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "text/plain", resp.Header.Get("Content-Type"))
	a.logger.Warn("plain marker")
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	must.NoError(t, err)
	must.StrContains(t, line, "[WARN]")
	must.StrContains(t, line, "plain marker")
}

func TestAgentMonitor_BadInput(t *testing.T) {
	a := NewTestAgent(t, nil)
	cases := []struct {
		query string
		want  string
	}{
		{"log_level=loud", "Unknown log level: loud"},
		{"log_json=maybe", "log_json"},
		{"plain=maybe", "plain"},
		{"node_id=a&server_id=b", "Cannot target node and server simultaneously"},
		{"node_id=not-this-node", "not this agent's node"},
		{"server_id=unknown.global", "unknown Nomad server unknown.global"},
	}
	for _, tc := range cases {
		resp := doRaw(t, a, http.MethodGet, "/v1/agent/monitor?"+tc.query, "")
		must.Between(t, 400, resp.StatusCode, 500, must.Sprint(tc.query))
		must.StrContains(t, readBody(t, resp), tc.want)
	}
}

func TestLogMonitor_DropsWhenFullAndCounts(t *testing.T) {
	m := &logMonitor{lines: make(chan []byte, 2)}
	for range 5 {
		n, err := m.Write([]byte("line\n"))
		must.NoError(t, err)
		must.Eq(t, 5, n)
	}
	must.Eq(t, 3, m.takeDropped())
	must.Eq(t, 0, m.takeDropped())
	must.Eq(t, 2, len(m.lines))
}
