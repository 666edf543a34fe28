package command

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"
)

// jobFile writes a job "x" with one group "g" and one raw_exec task "t",
// with the given HCL added at job, group and task level.
func jobFile(t *testing.T, job, group, task string) string {
	t.Helper()
	src := fmt.Sprintf(`job "x" {
  type = "batch"
%s
  group "g" {
%s
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
%s
    }
  }
}
`, job, group, task)
	path := filepath.Join(t.TempDir(), "x.nomad.hcl")
	must.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	return path
}

// Every block or attribute that would have no effect is refused by name,
// with exit code 1, before anything reaches a server.
func TestJobValidate_RefusesFieldsWithoutEffect(t *testing.T) {
	const (
		job   = `job "x": `
		group = `job "x" group "g": `
		task  = `job "x" group "g" task "t": `
	)
	cases := []struct {
		name              string
		job, group, task_ string
		want              string
	}{
		{name: "vault", task_: `vault { role = "app" }`, want: task + `field "Vault" is not supported by nomadq`},
		{name: "task consul", task_: `consul { namespace = "a" }`, want: task + `field "Consul" is not supported by nomadq`},
		{name: "group consul", group: `consul { cluster = "b" }`, want: group + `field "Consul" is not supported by nomadq`},
		{name: "group service tagged_addresses", group: "service {\n name = \"web\"\n provider = \"nomad\"\n tagged_addresses { lan = \"10.0.0.1\" }\n}", want: group + `field "Services[0].TaggedAddresses" is not supported by nomadq`},
		{name: "task service canary_tags", task_: "service {\n name = \"web\"\n provider = \"nomad\"\n canary_tags = [\"c\"]\n}", want: task + `field "Services[0].CanaryTags" is not supported by nomadq`},
		{name: "template wait", task_: "template {\n data = \"x\"\n destination = \"local/x\"\n wait { min = \"1s\" }\n}", want: task + `field "Templates[0].Wait" is not supported by nomadq`},
		{name: "template perms", task_: "template {\n data = \"x\"\n destination = \"local/x\"\n perms = \"rw\"\n}", want: `template 1 perms "rw" is not allowed: must be an octal file mode such as "0644"`},
		{name: "artifact s3", task_: `artifact { source = "s3::https://s3.amazonaws.com/b/x" }`, want: `artifact 1 source "s3::https://s3.amazonaws.com/b/x" is not supported by nomadq`},
		{name: "port host_network", group: "network {\n port \"http\" { host_network = \"public\" }\n}", want: group + `field "Networks[0].DynamicPorts[0].HostNetwork" is not supported by nomadq`},
		{name: "unknown network mode", group: `network { mode = "bridgee" }`, want: `network mode "bridgee" is not allowed: must be host, bridge, none or cni/<name>`},
		{name: "network device", group: `network { device = "eth0" }`, want: group + `field "Networks[0].Device" is not supported by nomadq`},
		{name: "device", task_: "resources {\n device \"nvidia/gpu\" {}\n}", want: task + `field "Resources.Devices" is not supported by nomadq`},
		{name: "numa", task_: "resources {\n numa { affinity = \"require\" }\n}", want: task + `field "Resources.NUMA" is not supported by nomadq`},
		{name: "logs enabled false", task_: `logs { enabled = false }`, want: task + `field "LogConfig.Enabled" = false is not supported by nomadq`},
		{name: "csi volume", group: "volume \"data\" {\n type = \"csi\"\n source = \"data\"\n}", want: group + `field "Volumes[\"data\"].Type" = "csi" is not supported by nomadq: only "host" is accepted`},
		{name: "csi volume access_mode", group: "volume \"data\" {\n type = \"host\"\n source = \"data\"\n access_mode = \"single-node-writer\"\n}", want: group + `field "Volumes[\"data\"].AccessMode" is not supported by nomadq`},
		{name: "csi_plugin", task_: "csi_plugin {\n id = \"p\"\n type = \"node\"\n mount_dir = \"/csi\"\n}", want: task + `field "CSIPluginConfig" is not supported by nomadq`},
		{name: "named identity", task_: `identity { name = "vault_default" }`, want: task + `field "Identities[0].Name" = "vault_default" is not supported by nomadq`},
		{name: "identity ttl", task_: `identity { ttl = "1h" }`, want: task + `field "Identity.TTL" is not supported by nomadq`},
		{name: "ui", job: `ui { description = "d" }`, want: job + `field "UI" is not supported by nomadq`},
		{name: "multiregion", job: "multiregion {\n region \"west\" {}\n}", want: job + `field "Multiregion" is not supported by nomadq`},
		{name: "disconnect", group: `disconnect { lost_after = "1h" }`, want: group + `field "Disconnect" is not supported by nomadq`},
		{name: "sticky ephemeral disk", group: `ephemeral_disk { sticky = true }`, want: group + `field "EphemeralDisk.Sticky" is not supported by nomadq`},
		{name: "task kind", task_: `kind = "connect-proxy:web"`, want: task + `field "Kind" is not supported by nomadq`},
		{name: "secret", task_: "secret \"s\" {\n provider = \"nomad\"\n path = \"p\"\n}", want: task + `field "Secrets" is not supported by nomadq`},
		{name: "action", task_: `action "a" { command = "/bin/true" }`, want: task + `field "Actions" is not supported by nomadq`},
		{name: "schedule", task_: "schedule {\n cron {\n start = \"0 9 * * *\"\n end = \"0 17\"\n }\n}", want: task + `field "Schedule" is not supported by nomadq`},
		{name: "user with raw_exec", task_: `user = "nobody"`, want: task + `field "User" is not supported by nomadq with driver "raw_exec"`},
		{name: "max_client_disconnect", group: `max_client_disconnect = "1h"`, want: group + `field "MaxClientDisconnect" is not supported by nomadq`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, "", "job", "validate", jobFile(t, tc.job, tc.group, tc.task_))
			must.Eq(t, 1, code, must.Sprint(out))
			must.StrContains(t, errOut, "Job validation errors:\n")
			must.StrContains(t, errOut, tc.want)
			must.StrNotContains(t, out, "Job validation successful")
		})
	}
}

// What takes effect is accepted: a job using each such block validates.
func TestJobValidate_AcceptsFieldsWithEffect(t *testing.T) {
	path := jobFile(t,
		`priority = 70
  meta { team = "a" }
  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }`,
		`count = 2
  network { mode = "host" }
  restart {
    attempts = 1
    mode     = "fail"
  }
  reschedule { attempts = 0 }
  ephemeral_disk { size = 100 }
  max_run_duration = "1m"`,
		`env { A = "b" }
      user = ""
      kill_timeout = "3s"
      kill_signal = "SIGINT"
      leader = true
      logs {
        max_files     = 2
        max_file_size = 5
      }
      identity {
        env  = true
        file = true
      }
      resources {
        cpu        = 100
        memory     = 64
        memory_max = 128
      }
      artifact {
        source      = "https://example.com/app.tar.gz"
        destination = "local/app"
        options { checksum = "sha256:00" }
        headers { X-Token = "t" }
      }
      template {
        source        = "local/app/app.tpl"
        destination   = "local/app.env"
        env           = true
        perms         = "0600"
        change_mode   = "noop"
      }`)
	code, out, errOut := run(t, "", "job", "validate", path)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Job validation successful\n", out)
}

// update and migrate are accepted, with the warning the server gives.
func TestJobValidate_WarnsAboutRollout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "svc.nomad.hcl")
	must.NoError(t, os.WriteFile(path, []byte(`job "svc" {
  update {
    max_parallel = 2
  }
  group "g" {
    migrate {
      max_parallel = 1
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["60"]
      }
    }
  }
}
`), 0o644))
	code, out, errOut := run(t, "", "job", "validate", path)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, `Job Warnings:
job "svc": update block: rolling updates and canaries are not implemented by nomadq; an update replaces every alloc at once

Job validation successful
`, out)
}

// The job real Nomad's `nomad job init` writes: every block without effect
// is named, and update is warned about.
func TestJobValidate_InitExample(t *testing.T) {
	code, out, errOut := run(t, "", "job", "validate", "testdata/init_example.nomad.hcl")
	must.Eq(t, 1, code)
	must.Eq(t, `Job validation errors:
job "example": field "UI" is not supported by nomadq
`, errOut)
	must.StrContains(t, out, `job "example": update block: rolling updates`)
	must.StrNotContains(t, out, "migrate block")
}
