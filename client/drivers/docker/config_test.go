package docker

import (
	"errors"
	"testing"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/shoenig/test/must"
)

func TestParsePluginConfig(t *testing.T) {
	t.Setenv("DOCKER_HOST", "")
	def, err := ParsePluginConfig(nil)
	must.NoError(t, err)
	must.Eq(t, DefaultEndpoint, def.endpoint())
	must.True(t, def.GCContainer)
	must.True(t, def.GCImage)
	must.Eq(t, 3*time.Minute, def.GCImageDelay)
	must.Eq(t, DanglingConfig{Enabled: true, Period: 5 * time.Minute, CreationGrace: 5 * time.Minute}, def.Dangling)
	must.False(t, def.AllowPrivileged)
	must.Eq(t, 2*time.Minute, def.PullActivityTimeout)

	t.Setenv("DOCKER_HOST", "unix:///run/other.sock")
	env, err := ParsePluginConfig(map[string]any{})
	must.NoError(t, err)
	must.Eq(t, "unix:///run/other.sock", env.endpoint())

	full, err := ParsePluginConfig(map[string]any{
		"endpoint":                  "unix:///x.sock",
		"gc":                        []any{map[string]any{"container": false, "image": false, "image_delay": "10s"}},
		"volumes":                   []map[string]any{{"enabled": true}},
		"allow_privileged":          false,
		"allow_caps":                []any{"cap_net_raw", "CHOWN"},
		"pull_activity_timeout":     "30s",
		"extra_labels":              []any{"job_*"},
		"infra_image":               "pause:1",
		"logging":                   map[string]any{"driver": "local", "config": map[string]any{"max-size": "5m"}},
		"pids_limit":                100,
		"allowed_modes":             map[string]any{"pid": []any{"host"}, "ipc": []any{"*"}},
		"container_exists_attempts": 2,
		"disable_log_collection":    true,
		"infra_image_pull_timeout":  "1m",
	})
	must.NoError(t, err)
	must.Eq(t, "unix:///x.sock", full.endpoint())
	must.False(t, full.GCContainer)
	must.False(t, full.GCImage)
	must.Eq(t, 10*time.Second, full.GCImageDelay)
	must.True(t, full.VolumesEnabled)
	must.False(t, full.AllowPrivileged)
	must.Eq(t, []string{"NET_RAW", "CHOWN"}, full.AllowCaps)
	must.Eq(t, 30*time.Second, full.PullActivityTimeout)
	must.Eq(t, []string{"job_*"}, full.ExtraLabels)
	must.Eq(t, int64(100), full.PidsLimit)
	must.Eq(t, 2, full.ContainerExistsAttempts)
	must.True(t, full.DisableLogCollection)
	must.Eq(t, time.Minute, full.InfraImagePullTimeout)
	must.True(t, full.modeAllowed("pid", "host"))
	must.True(t, full.modeAllowed("ipc", "shareable"))
	must.False(t, full.modeAllowed("uts", "host"))
	_, err = parseTask(map[string]any{"image": "busybox:1", "pid_mode": "host", "ipc_mode": "host"}, full)
	must.NoError(t, err, must.Sprint("allowed_modes allow them without allow_privileged"))
	_, err = parseTask(map[string]any{"image": "busybox:1", "pids_limit": 200}, full)
	must.ErrorContains(t, err, "above the docker plugin's pids_limit 100")
	capped, err := parseTask(map[string]any{"image": "busybox:1"}, full)
	must.NoError(t, err)
	must.Eq(t, int64(100), capped.pidsLimit)
	must.Eq(t, "local", full.LogType)
	must.Eq(t, map[string]string{"max-size": "5m"}, full.LogConfig)

	refused := []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"unknown", map[string]any{"endpiont": "x"}, `unknown plugin "docker" config key "endpiont"`},
		{"not built", map[string]any{"nvidia_runtime": "nvidia"}, `plugin "docker" config key "nvidia_runtime" is not supported by nomadq yet`},
		{"tls pair", map[string]any{"tls": map[string]any{"cert": "c.pem"}}, "tls needs both cert and key"},
		{"auth key", map[string]any{"auth": map[string]any{"file": "x"}}, `unknown plugin "docker" config auth key "file"`},
		{"dangling grace", map[string]any{"gc": map[string]any{"dangling_containers": map[string]any{"creation_grace": "10s"}}}, "creation_grace must be at least 1m0s"},
		{"dangling key", map[string]any{"gc": map[string]any{"dangling_containers": map[string]any{"every": "1m"}}}, `unknown plugin "docker" config gc.dangling_containers key "every"`},
		{"image delay", map[string]any{"gc": map[string]any{"image_delay": "-1m"}}, "gc.image_delay must not be negative"},
		{"selinux", map[string]any{"volumes": map[string]any{"selinuxlabel": "q"}}, `selinuxlabel must be "z" or "Z"`},
		{"bad duration", map[string]any{"pull_activity_timeout": "soon"}, "pull_activity_timeout"},
		{"bad glob", map[string]any{"extra_labels": []any{"job_["}}, "not a valid glob"},
		{"log type", map[string]any{"logging": map[string]any{"type": "fluentd"}}, `logging type "fluentd" is not supported`},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePluginConfig(tc.cfg)
			must.ErrorContains(t, err, tc.want)
		})
	}
}

func TestParseTask(t *testing.T) {
	pc := DefaultPluginConfig()
	ok := func(extra map[string]any) map[string]any {
		m := map[string]any{"image": "busybox:1"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	c, err := parseTask(ok(map[string]any{
		"command": "sh", "args": []any{"-c", "true"}, "entrypoint": []any{"/bin/env"},
		"labels": []any{map[string]any{"a": "b"}}, "cap_add": []any{"chown"}, "cap_drop": []any{"ALL"},
		"auth": []any{map[string]any{"username": "u", "password": "p"}}, "image_pull_timeout": "1m",
		"memory_hard_limit": 128, "network_mode": "host", "readonly_rootfs": true, "force_pull": true,
	}), pc)
	must.NoError(t, err)
	must.Eq(t, map[string]string{"a": "b"}, c.labels)
	must.Eq(t, time.Minute, c.imagePullTimeout)
	must.Eq(t, int64(128), c.memoryHardLimit)
	must.Eq(t, "u", c.auth.username)

	add, drop := taskConfig{}.effectiveCaps(pc)
	must.SliceEmpty(t, add)
	must.Eq(t, []string{"NET_RAW"}, drop, must.Sprint("Nomad's default allow_caps drops NET_RAW"))

	refused := []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"no image", map[string]any{"command": "x"}, `missing required config key "image"`},
		{"bad image", map[string]any{"image": "UPPER/Case::"}, `config key "image": "UPPER/Case::" is not a valid image reference`},
		{"unknown key", ok(map[string]any{"imagee": "x"}), `unknown task config key "imagee"`},
		{"not built", ok(map[string]any{"port_map": []any{map[string]any{"http": 80}}}), `task config key "port_map" is not supported by nomadq yet`},
		{"not built either", ok(map[string]any{"mac_address": "02:42:ac:11:00:02"}), `task config key "mac_address" is not supported by nomadq yet`},
		{"runtime", ok(map[string]any{"runtime": "crun"}), `"crun" is not allowed by the docker plugin's allow_runtimes`},
		{"userns", ok(map[string]any{"userns_mode": "host"}), `"userns_mode": "host" is not allowed`},
		{"cgroupns", ok(map[string]any{"cgroupns": "shared"}), `"cgroupns": "shared" is not allowed`},
		{"device path", ok(map[string]any{"devices": []any{map[string]any{"container_path": "/dev/x"}}}), "host_path is required"},
		{"device perms", ok(map[string]any{"devices": []any{map[string]any{"host_path": "/dev/null", "cgroup_permissions": "rx"}}}), "may only hold r, w and m"},
		{"load path", ok(map[string]any{"load": "../../img.tar"}), "must be a path inside the task's local dir"},
		{"exists attempts", ok(map[string]any{"container_exists_attempts": 0}), "must be at least 1"},
		{"volume driver", ok(map[string]any{"volume_driver": "nfs"}), `cannot use volume driver "nfs"`},
		{"host volume", ok(map[string]any{"volumes": []any{"/a:/b"}}), `volumes are not enabled; cannot mount host path "/a"`},
		{"volume spec", ok(map[string]any{"volumes": []any{"/a"}}), `"/a" must be "<host path>:<container path>[:<mode>]"`},
		{"bind host path", ok(map[string]any{"mount": []any{map[string]any{"type": "bind", "source": "/etc", "target": "/x"}}}), `cannot mount host path "/etc"`},
		{"docker volume", ok(map[string]any{"mount": map[string]any{"source": "data", "target": "/x"}}), `cannot mount volume "data"`},
		{"tmpfs source", ok(map[string]any{"mount": []any{map[string]any{"type": "tmpfs", "source": "x", "target": "/x"}}}), "a tmpfs mount has no source"},
		{"mount type", ok(map[string]any{"mount": []any{map[string]any{"type": "nfs", "target": "/x"}}}), `type "nfs" is not a mount type`},
		{"mount key", ok(map[string]any{"mount": []any{map[string]any{"type": "tmpfs", "target": "/x", "size": 1}}}), `unknown task config mount[0] key "size"`},
		{"mount options", ok(map[string]any{"mount": []any{map[string]any{"type": "tmpfs", "target": "/x", "bind_options": map[string]any{}}}}), "options of another mount type"},
		{"privileged", ok(map[string]any{"privileged": true}), "allow_privileged is false"},
		{"cap not allowed", ok(map[string]any{"cap_add": []any{"SYS_ADMIN"}}), `"SYS_ADMIN" is not allowed by the docker plugin's allow_caps`},
		{"container net without a name", ok(map[string]any{"network_mode": "container:"}), `"container:": name the container whose network the task joins`},
		{"custom net", ok(map[string]any{"network_mode": "mynet"}), `"mynet": user-defined networks are not supported`},
		{"relative work_dir", ok(map[string]any{"work_dir": "srv"}), `"work_dir": "srv" must be an absolute path`},
		{"reserved label", ok(map[string]any{"labels": map[string]any{LabelAllocID: "x"}}), "reserved"},
		{"auth key", ok(map[string]any{"auth": map[string]any{"token": "x"}}), `unknown task config auth key "token"`},
		{"host ipc", ok(map[string]any{"ipc_mode": "host"}), `"ipc_mode": "host" is not allowed`},
		{"host pid", ok(map[string]any{"pid_mode": "host"}), `"pid_mode": "host" is not allowed`},
		{"dns", ok(map[string]any{"dns_servers": []any{"dns.example"}}), `"dns.example" is not an IP address`},
		{"extra host", ok(map[string]any{"extra_hosts": []any{"db"}}), `"db" must be "<host>:<ip>"`},
		{"ulimit", ok(map[string]any{"ulimit": map[string]any{"nofile": "lots"}}), `nofile = "lots" must be`},
		{"ulimit order", ok(map[string]any{"ulimit": map[string]any{"nofile": "20:10"}}), "soft limit is above"},
		{"oom_score_adj", ok(map[string]any{"oom_score_adj": 2000}), "out of range"},
		{"log type", ok(map[string]any{"logging": map[string]any{"type": "syslog"}}), `task config logging type "syslog" is not supported`},
		{"log key", ok(map[string]any{"logging": map[string]any{"tag": "x"}}), `unknown task config logging key "tag"`},
		{"cfs period", ok(map[string]any{"cpu_cfs_period": 2000000}), `"cpu_cfs_period": 2000000 is out of range`},
		{"seccomp file", ok(map[string]any{"security_opt": []any{"seccomp=/nonexistent.json"}}), "seccomp profile"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseTask(tc.cfg, pc)
			must.ErrorContains(t, err, tc.want)
			var ve *drivers.ValidationError
			must.True(t, errors.As(err, &ve), must.Sprintf("%T is not a *ValidationError", err))
		})
	}
	priv := pc
	priv.AllowPrivileged = true
	priv.AllowCaps = []string{"ALL"}
	_, err = parseTask(ok(map[string]any{"privileged": true, "cap_add": []any{"SYS_ADMIN"}}), priv)
	must.NoError(t, err)
}

func TestMemoryLimits(t *testing.T) {
	const mb = 1 << 20
	cases := []struct {
		name                   string
		hard, memory, max      int64
		wantLimit, wantReserve int64
	}{
		{"memory is the limit", 0, 256, 0, 256 * mb, 0},
		{"memory_max raises it", 0, 256, 512, 512 * mb, 256 * mb},
		{"memory_hard_limit raises it", 1024, 256, 0, 1024 * mb, 256 * mb},
		{"the higher wins", 1024, 256, 2048, 2048 * mb, 256 * mb},
		{"memory_max -1 is no limit", 1024, 256, -1, 0, 256 * mb},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, r := memoryLimits(c.hard, c.memory, c.max)
			must.Eq(t, c.wantLimit, l)
			must.Eq(t, c.wantReserve, r)
		})
	}
}
