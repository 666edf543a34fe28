package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
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
	cfg := Default()
	var warnings []string
	must.NoError(t, Load(cfg, []string{dir}, func(w string) { warnings = append(warnings, w) }))
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
	must.True(t, sc.BatchQueue.Backfill) // the priority order's default
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
			err := Parse(Default(), "x.hcl", []byte(tc.body), nil)
			must.ErrorContains(t, err, tc.want)
		})
	}
	for _, tc := range []struct {
		block string
		want  bool
	}{
		{`order = "fair"`, true},
		{`order = "fair"` + "\n backfill = false", false},
		{`order = "fifo"`, false},
		{`order = "fifo"` + "\n backfill = true", true},
	} {
		cfg := Default()
		must.NoError(t, Parse(cfg, "x.hcl", []byte("server {\n default_scheduler_config {\n  batch_queue {\n "+tc.block+"\n }\n }\n}\n"), nil))
		must.Eq(t, tc.want, cfg.Server.DefaultSchedulerConfig.BatchQueue.Backfill, must.Sprint(tc.block))
	}
	cfg := Default()
	must.NoError(t, Parse(cfg, "x.hcl", []byte("server {\n enabled = true\n default_scheduler_config {\n  batch_queue { order = \"lifo\" }\n }\n}\n"), nil))
	must.ErrorContains(t, cfg.Validate(), `BatchQueue.Order "lifo" is not allowed`)
	must.ErrorContains(t, Default().Validate(), "must specify either server, client or dev mode")

	cfg = Default()
	must.NoError(t, Parse(cfg, "x.hcl", []byte("data_dir = \"data\"\nserver {\n enabled = true\n client_introduction {\n  enforcement = \"strict\"\n  max_identity_ttl = \"1h\"\n }\n}\n"), nil))
	must.Eq(t, &structs.NodeIntroductionConfig{Enforcement: "strict", DefaultIdentityTTL: 5 * time.Minute, MaxIdentityTTL: time.Hour}, cfg.Server.ClientIntroduction)
	must.NoError(t, cfg.Validate())
	cfg = Default()
	must.NoError(t, Parse(cfg, "x.hcl", []byte("server {\n enabled = true\n client_introduction {\n  enforcement = \"loose\"\n  max_identity_ttl = \"1m\"\n }\n}\n"), nil))
	err := cfg.Validate()
	must.ErrorContains(t, err, `server.client_introduction.enforcement "loose": must be one of none, warn, strict`)
	must.ErrorContains(t, err, "server.client_introduction.max_identity_ttl 1m0s: must not be less than default_identity_ttl 5m0s")
	must.ErrorContains(t, Parse(Default(), "x.hcl", []byte("server {\n client_introduction {\n  enforce = \"strict\"\n }\n}\n"), nil), `unknown config key "server.client_introduction.enforce"`)
}

// TestParseConfig_JSONMatchesHCL decodes the same settings written in
// both syntaxes and expects the same agent configuration.
func TestParseConfig_JSONMatchesHCL(t *testing.T) {
	cases := []struct{ name, hcl, json string }{
		{
			name: "top level and ports",
			hcl:  "name = \"a\"\nregion = \"r\"\nlog_json = true\nports {\n http = 1\n rpc = 2\n serf = 3\n}\naddresses { http = \"127.0.0.1\" }\n",
			json: `{"name": "a", "region": "r", "log_json": true, "ports": {"http": 1, "rpc": 2, "serf": 3}, "addresses": {"http": "127.0.0.1"}}`,
		},
		{
			name: "server with join and scheduler config",
			hcl: `server {
  enabled = true
  bootstrap_expect = 3
  server_join { retry_join = ["a:4648", "b:4648"] }
  default_scheduler_config {
    preemption_config { batch_scheduler_enabled = true }
    batch_queue {
      enabled = true
      workload_timeout = "2m"
    }
  }
}
`,
			json: `{"server": {"enabled": true, "bootstrap_expect": 3,
  "server_join": {"retry_join": ["a:4648", "b:4648"]},
  "default_scheduler_config": {"preemption_config": {"batch_scheduler_enabled": true},
    "batch_queue": {"enabled": true, "workload_timeout": "2m"}}}}`,
		},
		{
			name: "client meta as block and as object",
			hcl:  "client {\n enabled = true\n meta { rack = \"r1\" }\n options = { \"driver.raw_exec.enable\" = \"1\" }\n}\n",
			json: `{"client": {"enabled": true, "meta": {"rack": "r1"}, "options": {"driver.raw_exec.enable": "1"}}}`,
		},
		{
			name: "client chroot_env",
			hcl:  "client {\n chroot_env = {\n  \"/bin\" = \"/bin\"\n  \"/opt/tools\" = \"/usr/local\"\n }\n}\n",
			json: `{"client": {"chroot_env": {"/bin": "/bin", "/opt/tools": "/usr/local"}}}`,
		},
		{
			name: "plugin with a label",
			hcl:  "plugin \"raw_exec\" {\n config {\n  enabled = true\n  no_cgroups = 1\n }\n}\n",
			json: `{"plugin": {"raw_exec": {"config": {"enabled": true, "no_cgroups": 1}}}}`,
		},
		{
			name: "plugin as Nomad's JSON lists",
			hcl:  "plugin \"raw_exec\" {\n config {\n  enabled = true\n }\n}\n",
			json: `{"plugin": [{"raw_exec": [{"config": [{"enabled": true}]}]}]}`,
		},
		{
			name: "telemetry",
			hcl:  "telemetry {\n prometheus_metrics = true\n collection_interval = \"5s\"\n datadog_tags = [\"a:b\"]\n}\n",
			json: `{"telemetry": {"prometheus_metrics": true, "collection_interval": "5s", "datadog_tags": ["a:b"]}}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fromHCL, fromJSON := Default(), Default()
			must.NoError(t, Parse(fromHCL, "x.hcl", []byte(tc.hcl), nil))
			must.NoError(t, Parse(fromJSON, "x.json", []byte(tc.json), nil))
			must.Eq(t, fromHCL, fromJSON)
			must.NotEq(t, Default(), fromJSON)
		})
	}
}

func TestParseConfig_JSONErrorsAndWarnings(t *testing.T) {
	cases := []struct {
		name, file, body string
		err              string
		warning          string
	}{
		{name: "syntax error names file, line and column", file: "agent.json", body: "{\n  \"name\": \"a\",\n  \"ports\": {\"http\" 1}\n}\n",
			err: "error parsing agent.json: agent.json:3,20"},
		{name: "syntax error in a file without extension", file: "nomad123", body: "{\"name\": \"a\",}",
			err: "error parsing nomad123: nomad123:1,13-14: Trailing comma in object"},
		{name: "unknown top-level key", file: "x.json", body: "{\n\"nmae\": \"x\"}", err: `x.json:2,1: unknown config key "nmae"`},
		{name: "unknown nested key", file: "x.json", body: `{"server": {"bootstrap_expected": 3}}`, err: `x.json:1,13: unknown config key "server.bootstrap_expected"`},
		{name: "wrong type", file: "x.json", body: `{"ports": {"http": "web"}}`, err: `x.json:1,12: ports.http must be a whole number, got string`},
		{name: "not a whole number", file: "x.json", body: `{"server": {"bootstrap_expect": 1.5}}`, err: `server.bootstrap_expect must be a whole number, got number`},
		{name: "bad duration", file: "x.json", body: `{"server": {"retry_interval": "soon"}}`, err: `server.retry_interval "soon" is not a duration`},
		{name: "block given a value", file: "x.json", body: `{"server": true}`, err: `x.json:1,12: Incorrect JSON value type`},
		{name: "top level not an object", file: "x.json", body: `["server"]`, err: `x.json:1,2: Incorrect JSON value type`},
		{name: "meta value not a string", file: "x.json", body: `{"client": {"meta": {"rack": {"row": 1}}}}`, err: `client.meta.rack must be a string, got object`},
		{name: "ignored Nomad key warns", file: "x.json", body: "{\n \"vault\": {\"enabled\": true}}", warning: `x.json:2,2: config key "vault" is not implemented by nomadq and is ignored`},
		{name: "ignored nested key warns", file: "x.json", body: `{"server": {"raft_protocol": 3}}`, warning: `config key "server.raft_protocol" is not implemented`},
		{name: "comment key is ignored", file: "x.json", body: `{"//": "a comment", "name": "a"}`},
		{name: "null is not set", file: "x.json", body: `{"region": null, "server": {"enabled": null}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var warnings []string
			err := Parse(Default(), tc.file, []byte(tc.body), func(w string) { warnings = append(warnings, w) })
			if tc.err != "" {
				must.ErrorContains(t, err, tc.err)
				return
			}
			must.NoError(t, err)
			if tc.warning == "" {
				must.SliceEmpty(t, warnings)
				return
			}
			must.Len(t, 1, warnings)
			must.StrContains(t, warnings[0], tc.warning)
		})
	}
}

// TestParseConfig_HCLNestedAndLabelled covers what only HCL can write:
// nested blocks where name = value pairs belong, and block labels.
func TestParseConfig_HCLNestedAndLabelled(t *testing.T) {
	cases := []struct{ name, body, err, warning string }{
		{name: "block inside meta", body: "client {\n meta {\n  rack { row = 1 }\n }\n}\n", err: `x.hcl:3,3: unknown config key "client.meta.rack"`},
		{name: "plugin without a name", body: "plugin {\n}\n", err: `x.hcl:1,8: Missing name for plugin`},
		{name: "nested plugin config block warns", body: "plugin \"raw_exec\" {\n config {\n  enabled = true\n  auth { user = \"x\" }\n }\n}\n",
			warning: `x.hcl:4,3: plugin config block "plugin.raw_exec.config.auth" is ignored`},
		{name: "unknown plugin warns", body: "plugin \"podman\" {\n}\n", warning: `x.hcl:1,1: plugin "podman" is not available in nomadq; only docker, raw_exec, mock_driver are`},
		{name: "several unknown keys in source order", body: "zz = 1\naa = 2\nbb {}\n", err: "x.hcl:1,1: unknown config key \"zz\"\nx.hcl:2,1: unknown config key \"aa\"\nx.hcl:3,1: unknown config key \"bb\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var warnings []string
			err := Parse(Default(), "x.hcl", []byte(tc.body), func(w string) { warnings = append(warnings, w) })
			if tc.err != "" {
				must.ErrorContains(t, err, tc.err)
				return
			}
			must.NoError(t, err)
			must.Len(t, 1, warnings)
			must.StrContains(t, warnings[0], tc.warning)
		})
	}
}

// chroot_env reaches the client config: exec tasks get exactly these
// paths.
func TestParseConfig_ChrootEnv(t *testing.T) {
	c := Default()
	must.NoError(t, Parse(c, "x.hcl", []byte("client {\n chroot_env = { \"/opt/tools\" = \"/usr/local\" }\n}\n"), nil))
	must.Eq(t, map[string]string{"/opt/tools": "/usr/local"}, c.Client.ChrootEnv)
	err := Parse(Default(), "x.json", []byte(`{"client": {"chroot_env": {"/bin": {"x": 1}}}}`), nil)
	must.ErrorContains(t, err, "client.chroot_env./bin must be a string, got object")
}

// TestParse_DockerPluginBlocks: the docker plugin's config keeps its
// blocks (each a list of one map, as task configs have them) for the
// driver to check; another plugin's blocks are ignored with a warning,
// and a labelled block is an error naming it.
func TestParse_DockerPluginBlocks(t *testing.T) {
	cfg := Default()
	var warnings []string
	must.NoError(t, Parse(cfg, "docker.hcl", []byte(`
plugin "docker" {
  config {
    endpoint         = "unix:///run/other.sock"
    allow_privileged = true
    allow_caps       = ["chown", "net_raw"]
    gc {
      image_delay = "1h"
      container   = false
      dangling_containers {
        enabled = false
      }
    }
    volumes {
      enabled = true
    }
    auth {
      config = "/etc/docker-auth.json"
    }
  }
}
plugin "raw_exec" {
  config {
    enabled = true
    odd { x = 1 }
  }
}
`), func(w string) { warnings = append(warnings, w) }))
	var docker map[string]any
	for _, p := range cfg.Plugins {
		if p.Name == "docker" {
			docker = p.Config
		}
	}
	must.Eq(t, map[string]any{
		"endpoint":         "unix:///run/other.sock",
		"allow_privileged": true,
		"allow_caps":       []any{"chown", "net_raw"},
		"gc": []any{map[string]any{
			"image_delay":         "1h",
			"container":           false,
			"dangling_containers": []any{map[string]any{"enabled": false}},
		}},
		"volumes": []any{map[string]any{"enabled": true}},
		"auth":    []any{map[string]any{"config": "/etc/docker-auth.json"}},
	}, docker)
	must.SliceLen(t, 1, warnings)
	must.StrContains(t, warnings[0], `plugin config block "plugin.raw_exec.config.odd" is ignored`)

	err := Parse(Default(), "docker.hcl", []byte("plugin \"docker\" {\n  config {\n    gc \"x\" {\n      image = true\n    }\n  }\n}\n"), func(string) {})
	must.ErrorContains(t, err, `plugin.docker.config.gc: a plugin config block takes no label, got "x"`)
}
