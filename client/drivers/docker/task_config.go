package docker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/distribution/reference"
	"github.com/moby/moby/api/types/container"
	"github.com/nomadq/nomadq/client/drivers"
)

// taskKeys are the task config keys nomadq honours.
var taskKeys = []string{
	"image", "command", "args", "entrypoint", "work_dir", "labels", "hostname",
	"network_mode", "readonly_rootfs", "privileged", "cap_add", "cap_drop",
	"force_pull", "image_pull_timeout", "auth", "memory_hard_limit",
	"dns_servers", "dns_search_domains", "dns_options", "extra_hosts", "init", "tty",
	"interactive", "shm_size", "pids_limit", "sysctl", "ulimit", "security_opt",
	"ipc_mode", "pid_mode", "uts_mode", "cpuset_cpus", "group_add", "oom_score_adj",
	"volumes", "mount", "mounts", "logging", "auth_soft_fail", "cpu_hard_limit", "cpu_cfs_period",
	"devices", "healthchecks", "runtime", "userns_mode", "cgroupns", "load",
	"container_exists_attempts", "volume_driver", "ports",
}

// taskRefused are Nomad's other docker task config keys: refused by name
// until they are built (issue 39), never dropped.
var taskRefused = []string{
	"advertise_ipv6_address", "ipv4_address", "ipv6_address", "isolation", "mac_address",
	"network_aliases", "port_map", "storage_opt",
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
	authSoftFail     bool
	cpuHardLimit     bool
	cpuCFSPeriod     int64
	memoryHardLimit  int64

	dnsServers  []netip.Addr
	dnsSearch   []string
	dnsOptions  []string
	extraHosts  []string
	ports       []string
	init        bool
	tty         bool
	interactive bool
	shmSize     int64
	pidsLimit   int64
	sysctl      map[string]string
	ulimits     []*container.Ulimit
	securityOpt []string
	ipcMode     string
	pidMode     string
	utsMode     string
	cpusetCPUs  string
	groupAdd    []string
	oomScoreAdj int

	volumes      []volumeSpec
	volumeDriver string
	mounts       []mountSpec

	// logType is "" for the plugin's logging.
	logType   string
	logConfig map[string]string

	extra extraConfig
}

// defaultCFSPeriod is the CPU quota period unless cpu_cfs_period says
// otherwise, in microseconds, as Nomad.
const defaultCFSPeriod = 100000

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
	if c.ports, err = drivers.Strings(m, "ports"); err != nil {
		return c, err
	}
	switch mode := c.networkMode; {
	case mode == "", mode == "default", mode == "bridge", mode == "host", mode == "none":
	case strings.HasPrefix(mode, "container:"):
		if strings.TrimPrefix(mode, "container:") == "" {
			return c, invalid(`config key "network_mode": %q: name the container whose network the task joins, "container:<name or ID>"`, mode)
		}
	default:
		return c, invalid(`config key "network_mode": %q: user-defined networks are not supported by nomadq yet (supported: "bridge", "host", "none", "container:<name>")`, mode)
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
	if c.authSoftFail, _, err = boolKey(m, "auth_soft_fail"); err != nil {
		return c, err
	}
	if c.cpuHardLimit, _, err = boolKey(m, "cpu_hard_limit"); err != nil {
		return c, err
	}
	period, _, err := drivers.Int(m, "cpu_cfs_period")
	if err != nil {
		return c, err
	}
	if period < 0 || period > 1000000 {
		return c, invalid(`config key "cpu_cfs_period": %d is out of range (1 to 1000000 microseconds)`, period)
	}
	c.cpuCFSPeriod = int64(period)
	if c.cpuCFSPeriod == 0 {
		c.cpuCFSPeriod = defaultCFSPeriod
	}
	hard, _, err := drivers.Int(m, "memory_hard_limit")
	if err != nil {
		return c, err
	}
	if hard < 0 {
		return c, invalid(`config key "memory_hard_limit": must not be negative, got %d`, hard)
	}
	c.memoryHardLimit = int64(hard)
	if err := parseRuntimeKeys(m, pc, &c); err != nil {
		return c, err
	}
	if c.volumeDriver, _, err = drivers.String(m, "volume_driver"); err != nil {
		return c, err
	}
	if c.volumes, err = parseVolumes(m, pc, c.volumeDriver); err != nil {
		return c, err
	}
	if c.mounts, err = parseMounts(m, pc); err != nil {
		return c, err
	}
	if c.logType, c.logConfig, _, err = parseLogging(m, "task config logging"); err != nil {
		return c, err
	}
	if c.extra, err = parseExtraKeys(m, pc); err != nil {
		return c, err
	}
	return c, nil
}

// parseRuntimeKeys reads the keys that shape the container's runtime:
// DNS, hosts, namespaces, limits and security options.
func parseRuntimeKeys(m map[string]any, pc PluginConfig, c *taskConfig) error {
	servers, err := drivers.Strings(m, "dns_servers")
	if err != nil {
		return err
	}
	for _, s := range servers {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return invalid(`config key "dns_servers": %q is not an IP address`, s)
		}
		c.dnsServers = append(c.dnsServers, a)
	}
	if c.dnsSearch, err = drivers.Strings(m, "dns_search_domains"); err != nil {
		return err
	}
	if c.dnsOptions, err = drivers.Strings(m, "dns_options"); err != nil {
		return err
	}
	if c.extraHosts, err = drivers.Strings(m, "extra_hosts"); err != nil {
		return err
	}
	for _, h := range c.extraHosts {
		name, ip, ok := strings.Cut(h, ":")
		if !ok || name == "" {
			return invalid(`config key "extra_hosts": %q must be "<host>:<ip>"`, h)
		}
		if _, err := netip.ParseAddr(ip); err != nil && ip != "host-gateway" {
			return invalid(`config key "extra_hosts": %q: %q is not an IP address`, h, ip)
		}
	}
	for _, b := range []struct {
		key string
		dst *bool
	}{{"init", &c.init}, {"tty", &c.tty}, {"interactive", &c.interactive}} {
		if *b.dst, _, err = boolKey(m, b.key); err != nil {
			return err
		}
	}
	for _, n := range []struct {
		key string
		dst *int64
	}{{"shm_size", &c.shmSize}, {"pids_limit", &c.pidsLimit}} {
		v, _, err := drivers.Int(m, n.key)
		if err != nil {
			return err
		}
		if v < 0 {
			return invalid("config key %q: must not be negative, got %d", n.key, v)
		}
		*n.dst = int64(v)
	}
	if pc.PidsLimit > 0 {
		if c.pidsLimit > pc.PidsLimit {
			return invalid(`config key "pids_limit": %d is above the docker plugin's pids_limit %d`, c.pidsLimit, pc.PidsLimit)
		}
		if c.pidsLimit == 0 {
			c.pidsLimit = pc.PidsLimit
		}
	}
	if c.sysctl, err = stringMap(m, "sysctl"); err != nil {
		return err
	}
	limits, err := stringMap(m, "ulimit")
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(limits)) {
		u, err := parseUlimit(name, limits[name])
		if err != nil {
			return err
		}
		c.ulimits = append(c.ulimits, u)
	}
	if c.securityOpt, err = drivers.Strings(m, "security_opt"); err != nil {
		return err
	}
	for i, o := range c.securityOpt {
		// A seccomp profile is a file on the client, sent inline as the
		// docker CLI sends it.
		if prof, ok := strings.CutPrefix(o, "seccomp="); ok && prof != "unconfined" {
			b, err := os.ReadFile(prof)
			if err != nil {
				return invalid(`config key "security_opt": seccomp profile: %v`, err)
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, b); err != nil {
				return invalid(`config key "security_opt": seccomp profile %s is not JSON: %v`, prof, err)
			}
			c.securityOpt[i] = "seccomp=" + buf.String()
		}
	}
	// A namespace mode needs allow_privileged or the plugin's
	// allowed_modes, as in Nomad, whose allowed_modes are empty by default.
	for _, ns := range []struct {
		key, kind string
		dst       *string
	}{{"ipc_mode", "ipc", &c.ipcMode}, {"pid_mode", "pid", &c.pidMode}, {"uts_mode", "uts", &c.utsMode}} {
		if *ns.dst, _, err = drivers.String(m, ns.key); err != nil {
			return err
		}
		if !pc.modeAllowed(ns.kind, *ns.dst) {
			return invalid("config key %q: %q is not allowed: neither the docker plugin's allow_privileged nor its allowed_modes.%s allow it on this client", ns.key, *ns.dst, ns.kind)
		}
	}
	if c.cpusetCPUs, _, err = drivers.String(m, "cpuset_cpus"); err != nil {
		return err
	}
	if c.groupAdd, err = drivers.Strings(m, "group_add"); err != nil {
		return err
	}
	adj, _, err := drivers.Int(m, "oom_score_adj")
	if err != nil {
		return err
	}
	if adj < 0 || adj > 1000 {
		return invalid(`config key "oom_score_adj": %d is out of range (0 to 1000)`, adj)
	}
	c.oomScoreAdj = adj
	return nil
}

// parseUlimit reads Nomad's "soft:hard" or "limit" (soft and hard alike).
func parseUlimit(name, v string) (*container.Ulimit, error) {
	softS, hardS, ok := strings.Cut(v, ":")
	if !ok {
		hardS = softS
	}
	soft, err1 := strconv.ParseInt(softS, 10, 64)
	hard, err2 := strconv.ParseInt(hardS, 10, 64)
	if err1 != nil || err2 != nil {
		return nil, invalid(`config key "ulimit": %s = %q must be "<soft>:<hard>" or "<limit>"`, name, v)
	}
	if soft > hard {
		return nil, invalid(`config key "ulimit": %s = %q: the soft limit is above the hard one`, name, v)
	}
	return &container.Ulimit{Name: name, Soft: soft, Hard: hard}, nil
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
