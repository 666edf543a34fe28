package config

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// The server's garbage collection, heartbeat and Raft snapshot keys are
// read with Nomad's names and types, without the "not implemented"
// warning, and a value out of range is refused naming the key.
func TestParseConfig_ServerTuning(t *testing.T) {
	var warnings []string
	cfg := Default()
	must.NoError(t, Parse(cfg, "x.hcl", []byte(`server {
  node_gc_threshold         = "2h"
  job_gc_interval           = "30s"
  job_gc_threshold          = "10m"
  eval_gc_threshold         = "20m"
  batch_eval_gc_threshold   = "48h"
  heartbeat_grace           = "15s"
  min_heartbeat_ttl         = "20s"
  max_heartbeats_per_second = 12.5
  failover_heartbeat_ttl    = "7m"
  raft_snapshot_threshold   = 500
  raft_snapshot_interval    = "45s"
  raft_trailing_logs        = 2000
}
`), func(w string) { warnings = append(warnings, w) }))
	must.SliceEmpty(t, warnings)
	s := cfg.Server
	must.Eq(t, 2*time.Hour, s.NodeGCThreshold)
	must.Eq(t, 30*time.Second, s.JobGCInterval)
	must.Eq(t, 10*time.Minute, s.JobGCThreshold)
	must.Eq(t, 20*time.Minute, s.EvalGCThreshold)
	must.Eq(t, 48*time.Hour, s.BatchEvalGCThreshold)
	must.Eq(t, 15*time.Second, s.HeartbeatGrace)
	must.Eq(t, 20*time.Second, s.MinHeartbeatTTL)
	must.Eq(t, 12.5, s.MaxHeartbeatsPerSecond)
	must.Eq(t, 7*time.Minute, s.FailoverHeartbeatTTL)
	must.Eq(t, 500, s.RaftSnapshotThreshold)
	must.Eq(t, 45*time.Second, s.RaftSnapshotInterval)
	must.Eq(t, 2000, s.RaftTrailingLogs)

	// The same keys in a JSON file.
	jcfg := Default()
	must.NoError(t, Parse(jcfg, "x.json", []byte(`{"server": {"job_gc_threshold": "10m", "max_heartbeats_per_second": 12.5, "raft_trailing_logs": 2000}}`), nil))
	must.Eq(t, 10*time.Minute, jcfg.Server.JobGCThreshold)
	must.Eq(t, 12.5, jcfg.Server.MaxHeartbeatsPerSecond)
	must.Eq(t, 2000, jcfg.Server.RaftTrailingLogs)

	// Nomad's 0 for a heartbeat key keeps the default.
	zero := Default()
	must.NoError(t, Parse(zero, "x.hcl", []byte("server {\n heartbeat_grace = \"0s\"\n max_heartbeats_per_second = 0\n}\n"), nil))
	must.Eq(t, 0, zero.Server.HeartbeatGrace)
	must.Eq(t, 0, zero.Server.MaxHeartbeatsPerSecond)
}

func TestParseConfig_ServerTuningRefused(t *testing.T) {
	cases := []struct{ body, want string }{
		{`node_gc_threshold = "0s"`, `x.hcl:2,2: server.node_gc_threshold = 0s: must be at least 1ns`},
		{`job_gc_interval = "-5m"`, `server.job_gc_interval = -5m0s: must be at least 1ns`},
		{`job_gc_interval = "often"`, `server.job_gc_interval "often" is not a duration`},
		{`job_gc_threshold = "-1h"`, `server.job_gc_threshold = -1h0m0s: must be at least 1ns`},
		{`eval_gc_threshold = "0s"`, `server.eval_gc_threshold = 0s: must be at least 1ns`},
		{`batch_eval_gc_threshold = true`, `server.batch_eval_gc_threshold must be a duration string, got bool`},
		{`heartbeat_grace = "-1s"`, `server.heartbeat_grace = -1s: must be 0 (the default) or more`},
		{`min_heartbeat_ttl = "-1s"`, `server.min_heartbeat_ttl = -1s: must be 0 (the default) or more`},
		{`failover_heartbeat_ttl = "-1s"`, `server.failover_heartbeat_ttl = -1s: must be 0 (the default) or more`},
		{`max_heartbeats_per_second = -3`, `server.max_heartbeats_per_second = -3: must be 0 (the default) or more`},
		{`max_heartbeats_per_second = "fast"`, `server.max_heartbeats_per_second must be a number, got string`},
		{`raft_snapshot_threshold = 0`, `server.raft_snapshot_threshold = 0: must be 1 or more`},
		{`raft_snapshot_threshold = 1.5`, `server.raft_snapshot_threshold must be a whole number`},
		{`raft_snapshot_interval = "1ms"`, `server.raft_snapshot_interval = 1ms: must be at least 5ms`},
		{`raft_trailing_logs = -10`, `server.raft_trailing_logs = -10: must be 1 or more`},
	}
	for _, tc := range cases {
		t.Run(tc.body, func(t *testing.T) {
			cfg := Default()
			err := Parse(cfg, "x.hcl", []byte("server {\n "+tc.body+"\n}\n"), nil)
			must.ErrorContains(t, err, tc.want)
			must.Eq(t, Default().Server, cfg.Server)
		})
	}
}
