package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func writeConfig(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	must.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func TestLoadConfig_MergesInOrderAndMapsBatchQueue(t *testing.T) {
	dir := t.TempDir()
	writeConfig(t, dir, "10-base.hcl", `
name = "one"
data_dir = "/tmp/x"
ports { http = 5646 }
server {
  enabled = true
  server_join {
    retry_join     = ["10.0.0.1:4648"]
    retry_interval = "5s"
  }
  default_scheduler_config {
    scheduler_algorithm = "spread"
    batch_queue {
      enabled = true
      order = "priority"
      workload_timeout = "90s"
    }
  }
}
client {
  enabled = true
  meta { rack = "r1" }
  options = { "driver.raw_exec.enable" = "1" }
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
telemetry {
  prometheus_metrics  = true
  collection_interval = "5s"
}
`)
	writeConfig(t, dir, "20-override.hcl", `name = "two"
ports { rpc = 5647 }
consul { address = "x" }
`)
	cfg := DefaultConfig()
	var warnings []string
	must.NoError(t, LoadConfig(cfg, []string{dir}, func(w string) { warnings = append(warnings, w) }))
	must.Eq(t, "two", cfg.Name)
	must.Eq(t, 5646, cfg.Ports.HTTP)
	must.Eq(t, 5647, cfg.Ports.RPC)
	must.Eq(t, []string{"10.0.0.1:4648"}, cfg.Server.RetryJoin)
	must.Eq(t, 5*time.Second, cfg.Server.RetryInterval)
	sc := cfg.Server.DefaultSchedulerConfig
	must.Eq(t, "spread", sc.SchedulerAlgorithm)
	must.True(t, sc.BatchQueue.Enabled)
	must.Eq(t, "priority", sc.BatchQueue.Order)
	must.Eq(t, 1, sc.BatchQueue.ConcurrentPlacements)
	must.Eq(t, 90*time.Second, sc.BatchQueue.WorkloadTimeout)
	must.Eq(t, "r1", cfg.Client.Meta["rack"])
	must.True(t, cfg.RawExecEnabled())
	must.True(t, cfg.Telemetry.PrometheusMetrics)
	must.Len(t, 1, warnings)
	must.StrContains(t, warnings[0], `20-override.hcl:3,1: config key "consul" is not implemented`)
	must.NoError(t, cfg.Validate())
}

func TestParseConfig_Errors(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"unknown top-level key", "nmae = \"x\"\n", `x.hcl:1,1: unknown config key "nmae"`},
		{"unknown nested key", "server {\n  bootstrap_expected = 3\n}\n", `x.hcl:2,3: unknown config key "server.bootstrap_expected"`},
		{"unknown batch queue key", "server {\n default_scheduler_config {\n  batch_queue {\n   size = 3\n  }\n }\n}\n", `x.hcl:4,4: unknown config key "server.default_scheduler_config.batch_queue.size"`},
		{"wrong type", "ports {\n  http = \"web\"\n}\n", `x.hcl:2,3: ports.http must be a whole number, got string`},
		{"bad duration", "server {\n retry_interval = \"soon\"\n}\n", `server.retry_interval "soon" is not a duration`},
		{"syntax", "server {", `error parsing x.hcl`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ParseConfig(DefaultConfig(), "x.hcl", []byte(tc.body), nil)
			must.ErrorContains(t, err, tc.want)
		})
	}
	cfg := DefaultConfig()
	must.NoError(t, ParseConfig(cfg, "x.hcl", []byte("server {\n enabled = true\n default_scheduler_config {\n  batch_queue { order = \"lifo\" }\n }\n}\n"), nil))
	must.ErrorContains(t, cfg.Validate(), `BatchQueue.Order "lifo" is not allowed`)
	must.ErrorContains(t, DefaultConfig().Validate(), "must specify either server, client or dev mode")
}
