package config

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// TestLimits_Parse reads the limits block: Nomad's defaults when it is
// absent, every key honoured, and bad values refused naming the key.
func TestLimits_Parse(t *testing.T) {
	cases := []struct {
		name     string
		src      string
		want     Limits
		wantBody int64
		wantErr  string
	}{
		{
			name:     "absent: Nomad's defaults",
			src:      `name = "a"`,
			want:     Limits{HTTPSHandshakeTimeout: 5 * time.Second, HTTPMaxConnsPerClient: 100, RPCHandshakeTimeout: 5 * time.Second, RPCMaxConnsPerClient: 100, HTTPMaxBlockingQueriesPerClient: 100, HTTPMaxLogStreamsPerClient: 100},
			wantBody: DefaultMaxRequestBody,
		},
		{
			name: "every key",
			src: `limits {
  https_handshake_timeout   = "2s"
  http_max_conns_per_client = 7
  rpc_handshake_timeout     = "3s"
  rpc_max_conns_per_client  = 0
  http_max_request_bytes    = 4096
  http_max_blocking_queries_per_client = 5
  http_max_log_streams_per_client      = 0
}`,
			want:     Limits{HTTPSHandshakeTimeout: 2 * time.Second, HTTPMaxConnsPerClient: 7, RPCHandshakeTimeout: 3 * time.Second, HTTPMaxBlockingQueriesPerClient: 5},
			wantBody: 4096,
		},
		{
			name:    "negative cap",
			src:     `limits { rpc_max_conns_per_client = -1 }`,
			wantErr: "limits.rpc_max_conns_per_client -1 is not allowed: must be 0 (no limit) or more",
		},
		{
			name:    "negative timeout",
			src:     `limits { https_handshake_timeout = "-1s" }`,
			wantErr: `limits.https_handshake_timeout "-1s" is not allowed`,
		},
		{
			name:    "not a duration",
			src:     `limits { rpc_handshake_timeout = "soon" }`,
			wantErr: `limits.rpc_handshake_timeout "soon" is not a duration`,
		},
		{
			name:    "unknown key",
			src:     `limits { http_max_conns = 5 }`,
			wantErr: "http_max_conns",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Dev()
			err := Parse(c, "agent.hcl", []byte(tc.src), func(string) {})
			if err == nil {
				err = c.Validate()
			}
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, c.Limits)
			must.Eq(t, tc.wantBody, c.MaxRequestBody)
		})
	}
}

// TestLimits_JSON shows the limits as /v1/agent/self does, in Nomad's
// shape: timeouts as duration strings.
func TestLimits_JSON(t *testing.T) {
	buf, err := json.Marshal(DefaultLimits())
	must.NoError(t, err)
	must.StrContains(t, string(buf), `"HTTPSHandshakeTimeout":"5s","HTTPMaxConnsPerClient":100,"RPCHandshakeTimeout":"5s","RPCMaxConnsPerClient":100`)
}
