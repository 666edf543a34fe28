package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// The testdata/api-harness-* files have the shape the official api
// module's test harness (api/internal/testutil, TestServerConfig) writes:
// json.Marshal of its config struct into a file with no extension, read
// by nomad agent [-dev] -config <file>. -server is its default; -dev sets
// every field the struct has.
func TestLoadConfig_APIHarnessJSON(t *testing.T) {
	cases := []struct {
		name     string
		file     string
		dev      bool
		check    func(*testing.T, *Config)
		warnings []string
	}{
		{
			name: "server",
			file: "api-harness-server",
			check: func(t *testing.T, c *Config) {
				must.Eq(t, "node-20000", c.Name)
				must.Eq(t, "/tmp/nomad1234", c.DataDir)
				must.Eq(t, "ERROR", c.LogLevel)
				must.Eq(t, Ports{HTTP: 20000, RPC: 20001, Serf: 20002}, *c.Ports)
				must.True(t, c.Server.Enabled)
				must.Eq(t, 1, c.Server.BootstrapExpect)
				must.False(t, c.Client.Enabled)
				must.False(t, c.ACL.Enabled)
			},
			warnings: []string{`"disable_update_check"`, `"vault"`},
		},
		{
			// Nomad merges a file over -dev the way it merges files: false
			// and 0 leave what -dev set, so the client and the single-server
			// bootstrap stay on.
			name: "dev",
			file: "api-harness-dev",
			dev:  true,
			check: func(t *testing.T, c *Config) {
				must.Eq(t, "regionA", c.Region)
				must.Eq(t, Addresses{HTTP: "127.0.0.1", RPC: "127.0.0.1", Serf: "127.0.0.1"}, *c.AdvertiseAddrs)
				must.Eq(t, Ports{HTTP: 20003, RPC: 20004, Serf: 20005}, *c.Ports)
				must.True(t, c.Server.Enabled)
				must.Eq(t, 1, c.Server.BootstrapExpect)
				must.True(t, c.Client.Enabled)
				must.Eq(t, "true", c.Client.Options["test.tighten_network_timeouts"])
				must.True(t, c.RawExecEnabled())
				must.True(t, c.Telemetry.PrometheusMetrics)
			},
			warnings: []string{`"disable_update_check"`, `"consul"`, `"server.raft_protocol"`, `"vault"`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			if tc.dev {
				cfg = Dev()
			}
			var warnings []string
			path := filepath.Join("testdata", tc.file)
			must.NoError(t, Load(cfg, []string{path}, func(w string) { warnings = append(warnings, w) }))
			must.NoError(t, cfg.Validate())
			must.Eq(t, []string{path}, cfg.Files)
			tc.check(t, cfg)
			must.Len(t, len(tc.warnings), warnings, must.Sprint(warnings))
			for i, w := range tc.warnings {
				must.StrContains(t, warnings[i], w)
				must.StrContains(t, warnings[i], "is not implemented by nomadq and is ignored")
			}
		})
	}
}

func TestLoadConfig_DirectoryMergesHCLAndJSON(t *testing.T) {
	dir := t.TempDir()
	writeConfig(t, dir, "10-base.hcl", "name = \"base\"\nregion = \"r1\"\nserver { enabled = true }\n")
	writeConfig(t, dir, "20-ports.json", `{"name": "json", "ports": {"http": 5646}}`)
	writeConfig(t, dir, "30-last.hcl", "datacenter = \"dc9\"\n")
	// Neither editor leftovers nor other extensions are config files.
	writeConfig(t, dir, "30-last.hcl~", "nmae = 1\n")
	writeConfig(t, dir, ".#30-last.hcl", "nmae = 1\n")
	writeConfig(t, dir, "#40-auto.hcl#", "nmae = 1\n")
	writeConfig(t, dir, "README.md", "nmae = 1\n")

	cfg := Default()
	must.NoError(t, Load(cfg, []string{dir}, nil))
	must.Eq(t, "json", cfg.Name)
	must.Eq(t, "r1", cfg.Region)
	must.Eq(t, "dc9", cfg.Datacenter)
	must.Eq(t, 5646, cfg.Ports.HTTP)
	must.True(t, cfg.Server.Enabled)
	must.Eq(t, []string{
		filepath.Join(dir, "10-base.hcl"), filepath.Join(dir, "20-ports.json"), filepath.Join(dir, "30-last.hcl"),
	}, cfg.Files)
}

// TestLoadConfig_SeveralPaths loads -config paths in the order given:
// a directory, then a file without extension holding JSON, then HCL.
func TestLoadConfig_SeveralPaths(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "conf.d")
	must.NoError(t, os.Mkdir(sub, 0o755))
	writeConfig(t, sub, "a.json", `{"name": "from-dir", "log_level": "WARN"}`)
	jsonFile := writeConfig(t, dir, "agent-config", "\n  {\"name\": \"from-json\", \"server\": {\"enabled\": true}}")
	hclFile := writeConfig(t, dir, "last.conf", "log_level = \"TRACE\"\n")

	cfg := Default()
	must.NoError(t, Load(cfg, []string{sub, jsonFile, hclFile}, nil))
	must.Eq(t, "from-json", cfg.Name)
	must.Eq(t, "TRACE", cfg.LogLevel)
	must.True(t, cfg.Server.Enabled)
	must.Len(t, 3, cfg.Files)
}

func TestLoadConfig_ErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	writeConfig(t, dir, "a.hcl", "name = \"a\"\n")
	writeConfig(t, dir, "b.json", "{\"name\": \"b\",\n \"ports\": {\"http\": }}\n")
	err := Load(Default(), []string{dir}, nil)
	must.ErrorContains(t, err, "error parsing "+filepath.Join(dir, "b.json")+": "+filepath.Join(dir, "b.json")+":2,20")

	err = Load(Default(), []string{filepath.Join(dir, "missing")}, nil)
	must.ErrorContains(t, err, "error loading configuration from "+filepath.Join(dir, "missing"))
	must.True(t, strings.Contains(err.Error(), "no such file"))
}
