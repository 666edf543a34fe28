package docker

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/distribution/reference"
	"github.com/nomadq/nomadq/client/drivers"
)

// taskKeys are the task config keys nomadq honours.
var taskKeys = []string{
	"image", "command", "args", "entrypoint", "work_dir", "labels", "hostname",
	"network_mode", "readonly_rootfs", "privileged", "cap_add", "cap_drop",
	"force_pull", "image_pull_timeout", "auth", "memory_hard_limit",
}

// taskRefused are Nomad's other docker task config keys: refused by name
// until they are built (issue 39), never dropped.
var taskRefused = []string{
	"advertise_ipv6_address", "auth_soft_fail", "cgroupns", "cpuset_cpus", "cpu_hard_limit",
	"cpu_cfs_period", "container_exists_attempts", "devices", "dns_search_domains",
	"dns_options", "dns_servers", "extra_hosts", "group_add", "healthchecks", "init",
	"interactive", "ipc_mode", "ipv4_address", "ipv6_address", "isolation", "load",
	"logging", "mac_address", "mount", "mounts", "network_aliases", "oom_score_adj",
	"runtime", "pids_limit", "pid_mode", "ports", "port_map", "security_opt", "shm_size",
	"storage_opt", "sysctl", "tty", "ulimit", "uts_mode", "userns_mode", "volumes",
	"volume_driver",
}

// dockerDefaultCaps is the capability set Docker gives a container; the
// driver drops those the plugin's allow_caps does not allow, as Nomad's
// does.
var dockerDefaultCaps = []string{
	"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "NET_RAW", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}

// taskConfig is a task's docker config, parsed and checked.
type taskConfig struct {
	image            string
	command          string
	args             []string
	entrypoint       []string
	workDir          string
	labels           map[string]string
	hostname         string
	networkMode      string
	readonlyRootfs   bool
	privileged       bool
	capAdd           []string
	capDrop          []string
	forcePull        bool
	imagePullTimeout time.Duration
	auth             *registryAuth
	memoryHardLimit  int64
}

// registryAuth is a task's auth block.
type registryAuth struct {
	username, password, email, serverAddress string
}

func invalid(format string, args ...any) error {
	return &drivers.ValidationError{Err: fmt.Errorf("docker: "+format, args...)}
}

// parseTask reads and checks a task's config against the plugin's.
func parseTask(m map[string]any, pc PluginConfig) (taskConfig, error) {
	var c taskConfig
	if err := checkKnown("task config", m, taskKeys, taskRefused); err != nil {
		return c, err
	}
	img, ok, err := drivers.String(m, "image")
	if err != nil {
		return c, err
	}
	if !ok || img == "" {
		return c, invalid(`missing required config key "image"`)
	}
	if _, err := reference.ParseNormalizedNamed(img); err != nil {
		return c, invalid(`config key "image": %q is not a valid image reference: %v`, img, err)
	}
	c.image = img
	if c.command, _, err = drivers.String(m, "command"); err != nil {
		return c, err
	}
	if c.args, err = drivers.Strings(m, "args"); err != nil {
		return c, err
	}
	if c.entrypoint, err = drivers.Strings(m, "entrypoint"); err != nil {
		return c, err
	}
	if c.workDir, _, err = drivers.String(m, "work_dir"); err != nil {
		return c, err
	}
	if c.workDir != "" && !path.IsAbs(c.workDir) {
		return c, invalid(`config key "work_dir": %q must be an absolute path inside the container`, c.workDir)
	}
	if c.labels, err = stringMap(m, "labels"); err != nil {
		return c, err
	}
	for k := range c.labels {
		if strings.HasPrefix(k, "com.hashicorp.nomad.") {
			return c, invalid(`config key "labels": %q is reserved for the labels Nomad sets`, k)
		}
	}
	if c.hostname, _, err = drivers.String(m, "hostname"); err != nil {
		return c, err
	}
	if c.networkMode, _, err = drivers.String(m, "network_mode"); err != nil {
		return c, err
	}
	switch mode := c.networkMode; {
	case mode == "", mode == "default", mode == "bridge", mode == "host", mode == "none":
	case strings.HasPrefix(mode, "container:"):
		return c, invalid(`config key "network_mode": %q: joining another container's network is not supported by nomadq yet (supported: "bridge", "host", "none")`, mode)
	default:
		return c, invalid(`config key "network_mode": %q: user-defined networks are not supported by nomadq yet (supported: "bridge", "host", "none")`, mode)
	}
	if c.hostname != "" && c.networkMode == "host" {
		return c, invalid(`config key "hostname": cannot be set with network_mode = "host"`)
	}
	for _, b := range []struct {
		key string
		dst *bool
	}{{"readonly_rootfs", &c.readonlyRootfs}, {"privileged", &c.privileged}, {"force_pull", &c.forcePull}} {
		if *b.dst, _, err = boolKey(m, b.key); err != nil {
			return c, err
		}
	}
	if c.privileged && !pc.AllowPrivileged {
		return c, invalid(`config key "privileged": true is not allowed: the docker plugin's allow_privileged is false on this client`)
	}
	if c.capAdd, err = drivers.Strings(m, "cap_add"); err != nil {
		return c, err
	}
	if c.capDrop, err = drivers.Strings(m, "cap_drop"); err != nil {
		return c, err
	}
	c.capAdd, c.capDrop = normalizeCaps(c.capAdd), normalizeCaps(c.capDrop)
	if !slices.Contains(pc.AllowCaps, "ALL") {
		for _, cp := range c.capAdd {
			if cp == "ALL" || !slices.Contains(pc.AllowCaps, cp) {
				return c, invalid(`config key "cap_add": %q is not allowed by the docker plugin's allow_caps (%s)`, cp, strings.Join(pc.AllowCaps, ", "))
			}
		}
	}
	pull, ok, err := drivers.Duration(m, "image_pull_timeout")
	if err != nil {
		return c, err
	}
	c.imagePullTimeout = pc.ImagePullTimeout
	if ok {
		if pull <= 0 {
			return c, invalid(`config key "image_pull_timeout": must be positive, got %s`, pull)
		}
		c.imagePullTimeout = pull
	}
	auth, err := block(m, "auth")
	if err != nil {
		return c, err
	}
	if auth != nil {
		if err := checkKnown("task config auth", auth, []string{"username", "password", "email", "server_address"}, nil); err != nil {
			return c, err
		}
		c.auth = &registryAuth{}
		for _, f := range []struct {
			key string
			dst *string
		}{{"username", &c.auth.username}, {"password", &c.auth.password}, {"email", &c.auth.email}, {"server_address", &c.auth.serverAddress}} {
			if *f.dst, _, err = drivers.String(auth, f.key); err != nil {
				return c, err
			}
		}
	}
	hard, _, err := drivers.Int(m, "memory_hard_limit")
	if err != nil {
		return c, err
	}
	if hard < 0 {
		return c, invalid(`config key "memory_hard_limit": must not be negative, got %d`, hard)
	}
	c.memoryHardLimit = int64(hard)
	return c, nil
}

// effectiveCaps are the container's cap_add and cap_drop: the task's, plus
// a drop of Docker's defaults that the plugin does not allow.
func (c taskConfig) effectiveCaps(pc PluginConfig) (add, drop []string) {
	drop = slices.Clone(c.capDrop)
	if slices.Contains(pc.AllowCaps, "ALL") || slices.Contains(drop, "ALL") {
		return c.capAdd, drop
	}
	for _, cp := range dockerDefaultCaps {
		if !slices.Contains(pc.AllowCaps, cp) && !slices.Contains(c.capAdd, cp) && !slices.Contains(drop, cp) {
			drop = append(drop, cp)
		}
	}
	return c.capAdd, drop
}

// stringMap reads a map of strings given as a map or as a list of maps
// (HCL's labels { ... } block form).
func stringMap(m map[string]any, key string) (map[string]string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	out := map[string]string{}
	add := func(mm map[string]any) error {
		for k, val := range mm {
			s, ok := val.(string)
			if !ok {
				return invalid("config key %q: value of %q must be a string, got %T", key, k, val)
			}
			out[k] = s
		}
		return nil
	}
	switch l := v.(type) {
	case map[string]string:
		for k, s := range l {
			out[k] = s
		}
		return out, nil
	case map[string]any:
		return out, add(l)
	case []map[string]any:
		for _, mm := range l {
			if err := add(mm); err != nil {
				return nil, err
			}
		}
		return out, nil
	case []any:
		for _, e := range l {
			mm, ok := e.(map[string]any)
			if !ok {
				return nil, invalid("config key %q must be a map of strings, got %T", key, e)
			}
			if err := add(mm); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, invalid("config key %q must be a map of strings, got %T", key, v)
}
