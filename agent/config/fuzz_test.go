package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzParse feeds agent config files to the parser as -config does, as
// HCL or, by name, as JSON. Whatever the input it answers an error or a
// config, never a panic; a file it accepts can be validated, and loading
// it twice (as a -config directory and a file naming the same settings
// would) gives what loading it once gives.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src, true)
	}
	for _, src := range []string{
		"name = \"a\"\nregion = \"r\"\nlog_json = true\nports {\n http = 1\n rpc = 2\n serf = 3\n}\naddresses { http = \"127.0.0.1\" }\n",
		`
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
    preemption_config { batch_scheduler_enabled = true }
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
  chroot_env = { "/bin" = "/bin" }
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
telemetry {
  prometheus_metrics  = true
  collection_interval = "5s"
  datadog_tags = ["a:b"]
}
consul { address = "x" }
`,
		"server {\n  bootstrap_expected = 3\n}\n",
		"ports {\n  http = \"web\"\n}\n",
		"server {\n retry_interval = \"soon\"\n}\n",
		"server {",
		"server {\n client_introduction {\n  enforcement = \"strict\"\n }\n}\n",
		"acl {\n enabled = true\n token_ttl = \"30s\"\n}\n",
		"limits {\n http_max_conns_per_client = 10\n}\n",
	} {
		f.Add([]byte(src), false)
	}
	for _, src := range []string{
		`{"server": {"enabled": true, "bootstrap_expect": 3, "server_join": {"retry_join": ["a:4648", "b:4648"]}, "default_scheduler_config": {"preemption_config": {"batch_scheduler_enabled": true}, "batch_queue": {"enabled": true, "workload_timeout": "2m"}}}}`,
		`{"client": {"enabled": true, "meta": {"rack": "r1"}, "options": {"driver.raw_exec.enable": "1"}}}`,
		`{"plugin": [{"raw_exec": [{"config": [{"enabled": true}]}]}]}`,
		`{"server": {"bootstrap_expect": 1.5}}`,
		`{"server": true}`,
		`["server"]`,
		`{"client": {"meta": {"rack": {"row": 1}}}}`,
	} {
		f.Add([]byte(src), true)
	}

	f.Fuzz(func(t *testing.T, src []byte, asJSON bool) {
		name := "fuzz.hcl"
		if asJSON {
			name = "fuzz.json"
		}
		once := Default()
		if err := Parse(once, name, src, nil); err != nil {
			return
		}
		_ = once.Validate()
		twice := Default()
		if err := Parse(twice, name, src, nil); err != nil {
			t.Fatalf("second parse of the same file failed: %v", err)
		}
		if err := Parse(twice, name, src, nil); err != nil {
			t.Fatalf("the same file on top of itself failed: %v", err)
		}
		if !reflect.DeepEqual(once, twice) {
			t.Fatalf("the same file loaded twice differs from loading it once:\nonce  %#v\ntwice %#v", once, twice)
		}
	})
}
