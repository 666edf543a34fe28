package docker

import (
	"fmt"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
)

// DefaultEndpoint is the engine's address when neither the plugin config
// nor DOCKER_HOST names one.
const DefaultEndpoint = "unix:///var/run/docker.sock"

// DefaultAllowCaps are the capabilities a task may keep or add unless the
// plugin's allow_caps says otherwise: Nomad's defaults (Docker's default
// set less NET_RAW).
var DefaultAllowCaps = []string{
	"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}

// PluginConfig is the docker plugin's config block as Nomad reads it, the
// keys nomadq honours.
type PluginConfig struct {
	// Endpoint is the engine's address; "" means DOCKER_HOST, else
	// DefaultEndpoint.
	Endpoint string
	// TLSCert, TLSKey and TLSCA secure a tcp:// endpoint: the client's
	// certificate and key (mutual TLS) and the CA the engine's
	// certificate must chain to.
	TLSCert, TLSKey, TLSCA string
	// fromEnv says the endpoint is the environment's (no endpoint key).
	fromEnv bool
	// AuthConfig is a docker config.json whose credentials pulls use;
	// AuthHelper a docker-credential-<name> helper asked after it.
	AuthConfig string
	AuthHelper string
	// GCContainer removes a task's container once the task is destroyed.
	GCContainer bool
	// GCImage removes an image GCImageDelay after the last task using
	// it is destroyed.
	GCImage      bool
	GCImageDelay time.Duration
	// Dangling is gc.dangling_containers.
	Dangling DanglingConfig
	// VolumesEnabled allows host paths in a task's volumes and mounts;
	// reported as driver.docker.volumes.enabled.
	VolumesEnabled bool
	// SELinuxLabel ("z" or "Z") is added to the task's bind mounts'
	// options, so the engine relabels them.
	SELinuxLabel string
	// AllowPrivileged allows privileged = true in tasks.
	AllowPrivileged bool
	// AllowCaps are the capabilities tasks may have; "ALL" allows any.
	AllowCaps []string
	// PullActivityTimeout cancels a pull the engine reports no progress
	// on for this long.
	PullActivityTimeout time.Duration
	// ImagePullTimeout is a pull's limit unless the task sets
	// image_pull_timeout.
	ImagePullTimeout time.Duration
	// InfraImage is the image of the network pause container; it takes
	// effect with bridge networking, which is not supported yet.
	InfraImage string
	// ContainerExistsAttempts is the tasks' container_exists_attempts
	// unless they set it.
	ContainerExistsAttempts int
	// PidsLimit, when positive, is the tasks' pids_limit unless they set
	// a lower one; a higher one is refused.
	PidsLimit int64
	// DisableLogCollection leaves the output with the engine only: the
	// alloc's log files stay empty.
	DisableLogCollection bool
	// AllowedModes are globs of the ipc, pid, uts and userns modes tasks
	// may use without allow_privileged.
	AllowedModes map[string][]string
	// InfraImagePullTimeout bounds pulling InfraImage (bridge networking,
	// not supported yet).
	InfraImagePullTimeout time.Duration
	// AllowRuntimes are the container runtimes tasks may ask for.
	AllowRuntimes []string
	// LogType and LogConfig are the engine's logging driver for task
	// containers unless a task sets its own.
	LogType   string
	LogConfig map[string]string
	// ExtraLabels are globs over Nomad's optional container labels
	// (job_name, job_id, task_group_name, task_name, namespace,
	// node_name, node_id).
	ExtraLabels []string
}

// DefaultPluginConfig is the config of a client whose agent has no
// plugin "docker" block, as Nomad's defaults.
func DefaultPluginConfig() PluginConfig {
	return PluginConfig{
		Endpoint:                os.Getenv("DOCKER_HOST"),
		fromEnv:                 true,
		GCContainer:             true,
		GCImage:                 true,
		GCImageDelay:            3 * time.Minute,
		Dangling:                DanglingConfig{Enabled: true, Period: 5 * time.Minute, CreationGrace: 5 * time.Minute},
		AllowCaps:               slices.Clone(DefaultAllowCaps),
		PullActivityTimeout:     2 * time.Minute,
		ImagePullTimeout:        5 * time.Minute,
		InfraImage:              "registry.k8s.io/pause-amd64:3.3",
		AllowRuntimes:           []string{"runc", "nvidia"},
		ContainerExistsAttempts: 5,
		InfraImagePullTimeout:   5 * time.Minute,
		LogType:                 "json-file",
		LogConfig:               map[string]string{"max-file": "2", "max-size": "2m"},
	}
}

// pluginKeys are the plugin config keys nomadq honours; pluginRefused are
// Nomad's others, refused with the reason.
var (
	pluginKeys = []string{
		"endpoint", "auth", "gc", "volumes", "allow_privileged", "allow_caps",
		"pull_activity_timeout", "image_pull_timeout", "infra_image", "extra_labels", "logging",
		"allow_runtimes", "container_exists_attempts", "pids_limit", "disable_log_collection",
		"allowed_modes", "infra_image_pull_timeout", "tls",
	}
	pluginRefused = []string{
		"nvidia_runtime", "oom_score_adj", "windows_allow_insecure_container_admin",
	}
)

// ParsePluginConfig reads a plugin "docker" { config { ... } } block as
// the agent's config decoder hands it over (nested blocks as a map or a
// list of one map) on top of DefaultPluginConfig. Nomad keys nomadq does
// not implement yet and keys Nomad does not have are refused by name.
func ParsePluginConfig(m map[string]any) (PluginConfig, error) {
	c := DefaultPluginConfig()
	if err := checkKnown("plugin \"docker\" config", m, pluginKeys, pluginRefused); err != nil {
		return c, err
	}
	var err error
	if v, ok, e := drivers.String(m, "endpoint"); e != nil {
		return c, pluginErr(e)
	} else if ok && v != "" {
		c.Endpoint, c.fromEnv = v, false
	}
	if auth, err := block(m, "auth"); err != nil {
		return c, pluginErr(err)
	} else if auth != nil {
		if err := checkKnown("plugin \"docker\" config auth", auth, []string{"config", "helper"}, nil); err != nil {
			return c, err
		}
		if c.AuthConfig, _, err = drivers.String(auth, "config"); err != nil {
			return c, pluginErr(err)
		}
		if c.AuthHelper, _, err = drivers.String(auth, "helper"); err != nil {
			return c, pluginErr(err)
		}
	}
	if tb, err := block(m, "tls"); err != nil {
		return c, pluginErr(err)
	} else if tb != nil {
		if err := checkKnown("plugin \"docker\" config tls", tb, []string{"cert", "key", "ca"}, nil); err != nil {
			return c, err
		}
		for _, f := range []struct {
			key string
			dst *string
		}{{"cert", &c.TLSCert}, {"key", &c.TLSKey}, {"ca", &c.TLSCA}} {
			if *f.dst, _, err = drivers.String(tb, f.key); err != nil {
				return c, pluginErr(err)
			}
		}
		if (c.TLSCert == "") != (c.TLSKey == "") {
			return c, fmt.Errorf("docker plugin config: tls needs both cert and key, or neither")
		}
	}
	if gc, err := block(m, "gc"); err != nil {
		return c, pluginErr(err)
	} else if gc != nil {
		if err := checkKnown("plugin \"docker\" config gc", gc, []string{"container", "image", "image_delay", "dangling_containers"}, nil); err != nil {
			return c, err
		}
		if err := parseDangling(gc, &c.Dangling); err != nil {
			return c, err
		}
		for _, b := range []struct {
			key string
			dst *bool
		}{{"container", &c.GCContainer}, {"image", &c.GCImage}} {
			if v, ok, err := boolKey(gc, b.key); err != nil {
				return c, pluginErr(err)
			} else if ok {
				*b.dst = v
			}
		}
		if v, ok, err := drivers.Duration(gc, "image_delay"); err != nil {
			return c, pluginErr(err)
		} else if ok {
			if v < 0 {
				return c, fmt.Errorf("docker plugin config: gc.image_delay must not be negative, got %s", v)
			}
			c.GCImageDelay = v
		}
	}
	if vol, err := block(m, "volumes"); err != nil {
		return c, pluginErr(err)
	} else if vol != nil {
		if err := checkKnown("plugin \"docker\" config volumes", vol, []string{"enabled", "selinuxlabel"}, nil); err != nil {
			return c, err
		}
		if c.VolumesEnabled, _, err = boolKey(vol, "enabled"); err != nil {
			return c, pluginErr(err)
		}
		if c.SELinuxLabel, _, err = drivers.String(vol, "selinuxlabel"); err != nil {
			return c, pluginErr(err)
		}
		if c.SELinuxLabel != "" && c.SELinuxLabel != "z" && c.SELinuxLabel != "Z" {
			return c, fmt.Errorf("docker plugin config: volumes.selinuxlabel must be \"z\" or \"Z\", got %q", c.SELinuxLabel)
		}
	}
	if c.AllowPrivileged, _, err = boolKey(m, "allow_privileged"); err != nil {
		return c, pluginErr(err)
	}
	if _, ok := m["allow_caps"]; ok {
		caps, err := drivers.Strings(m, "allow_caps")
		if err != nil {
			return c, pluginErr(err)
		}
		c.AllowCaps = normalizeCaps(caps)
	}
	for _, d := range []struct {
		key string
		dst *time.Duration
	}{{"pull_activity_timeout", &c.PullActivityTimeout}, {"image_pull_timeout", &c.ImagePullTimeout}} {
		v, ok, err := drivers.Duration(m, d.key)
		if err != nil {
			return c, pluginErr(err)
		}
		if ok {
			if v <= 0 {
				return c, fmt.Errorf("docker plugin config: %s must be positive, got %s", d.key, v)
			}
			*d.dst = v
		}
	}
	if v, ok, e := drivers.String(m, "infra_image"); e != nil {
		return c, pluginErr(e)
	} else if ok && v != "" {
		c.InfraImage = v
	}
	if n, ok, err := drivers.Int(m, "container_exists_attempts"); err != nil {
		return c, pluginErr(err)
	} else if ok {
		if n < 1 {
			return c, fmt.Errorf("docker plugin config: container_exists_attempts must be at least 1, got %d", n)
		}
		c.ContainerExistsAttempts = n
	}
	if n, _, err := drivers.Int(m, "pids_limit"); err != nil {
		return c, pluginErr(err)
	} else if n < 0 {
		return c, fmt.Errorf("docker plugin config: pids_limit must not be negative, got %d", n)
	} else {
		c.PidsLimit = int64(n)
	}
	if c.DisableLogCollection, _, err = boolKey(m, "disable_log_collection"); err != nil {
		return c, pluginErr(err)
	}
	if am, err := block(m, "allowed_modes"); err != nil {
		return c, pluginErr(err)
	} else if am != nil {
		if err := checkKnown("plugin \"docker\" config allowed_modes", am, []string{"ipc", "pid", "uts", "userns"}, nil); err != nil {
			return c, err
		}
		c.AllowedModes = map[string][]string{}
		for _, k := range []string{"ipc", "pid", "uts", "userns"} {
			globs, err := drivers.Strings(am, k)
			if err != nil {
				return c, pluginErr(err)
			}
			for _, g := range globs {
				if _, err := path.Match(g, ""); err != nil {
					return c, fmt.Errorf("docker plugin config: allowed_modes.%s: %q is not a valid glob: %v", k, g, err)
				}
			}
			c.AllowedModes[k] = globs
		}
	}
	if v, ok, err := drivers.Duration(m, "infra_image_pull_timeout"); err != nil {
		return c, pluginErr(err)
	} else if ok {
		if v <= 0 {
			return c, fmt.Errorf("docker plugin config: infra_image_pull_timeout must be positive, got %s", v)
		}
		c.InfraImagePullTimeout = v
	}
	if _, ok := m["allow_runtimes"]; ok {
		if c.AllowRuntimes, err = drivers.Strings(m, "allow_runtimes"); err != nil {
			return c, pluginErr(err)
		}
	}
	if typ, cfg, ok, err := parseLogging(m, "plugin \"docker\" config logging"); err != nil {
		return c, err
	} else if ok {
		c.LogType, c.LogConfig = typ, cfg
	}
	if c.ExtraLabels, err = drivers.Strings(m, "extra_labels"); err != nil {
		return c, pluginErr(err)
	}
	for _, g := range c.ExtraLabels {
		if _, err := path.Match(g, ""); err != nil {
			return c, fmt.Errorf("docker plugin config: extra_labels: %q is not a valid glob: %v", g, err)
		}
	}
	return c, nil
}

// logTypes are the engine's logging drivers that keep the output for
// the engine's logs API, which the driver reads it through.
var logTypes = []string{"json-file", "local"}

// parseLogging reads a logging block: type (or its older name driver)
// and config. ok is false when there is none.
func parseLogging(m map[string]any, what string) (string, map[string]string, bool, error) {
	b, err := block(m, "logging")
	if err != nil || b == nil {
		return "", nil, false, err
	}
	if err := checkKnown(what, b, []string{"type", "driver", "config"}, nil); err != nil {
		return "", nil, false, err
	}
	typ, _, err := drivers.String(b, "type")
	if err != nil {
		return "", nil, false, err
	}
	if typ == "" {
		if typ, _, err = drivers.String(b, "driver"); err != nil {
			return "", nil, false, err
		}
	}
	if typ == "" {
		typ = "json-file"
	}
	if !slices.Contains(logTypes, typ) {
		return "", nil, false, &drivers.ValidationError{Err: fmt.Errorf("docker: %s type %q is not supported: the driver reads a task's output through the engine, which keeps it only with %s", what, typ, strings.Join(logTypes, " or "))}
	}
	cfg, err := stringMap(b, "config")
	if err != nil {
		return "", nil, false, err
	}
	return typ, cfg, true, nil
}

// parseDangling reads gc { dangling_containers { ... } }.
func parseDangling(gc map[string]any, dc *DanglingConfig) error {
	b, err := block(gc, "dangling_containers")
	if err != nil {
		return pluginErr(err)
	}
	if b == nil {
		return nil
	}
	if err := checkKnown("plugin \"docker\" config gc.dangling_containers", b, []string{"enabled", "period", "creation_grace", "dry_run"}, nil); err != nil {
		return err
	}
	for _, f := range []struct {
		key string
		dst *bool
	}{{"enabled", &dc.Enabled}, {"dry_run", &dc.DryRun}} {
		if v, ok, err := boolKey(b, f.key); err != nil {
			return pluginErr(err)
		} else if ok {
			*f.dst = v
		}
	}
	if v, ok, err := drivers.Duration(b, "period"); err != nil {
		return pluginErr(err)
	} else if ok {
		if v <= 0 {
			return fmt.Errorf("docker plugin config: gc.dangling_containers.period must be positive, got %s", v)
		}
		dc.Period = v
	}
	if v, ok, err := drivers.Duration(b, "creation_grace"); err != nil {
		return pluginErr(err)
	} else if ok {
		if v < danglingMinGrace {
			return fmt.Errorf("docker plugin config: gc.dangling_containers.creation_grace must be at least %s, got %s", danglingMinGrace, v)
		}
		dc.CreationGrace = v
	}
	return nil
}

// modeAllowed reports whether a task may use mode for the namespace kind
// ("ipc", "pid", "uts", "userns"): always with allow_privileged, else when
// one of allowed_modes' globs matches, as Nomad.
func (c PluginConfig) modeAllowed(kind, mode string) bool {
	if mode == "" || c.AllowPrivileged {
		return true
	}
	for _, g := range c.AllowedModes[kind] {
		if ok, _ := path.Match(g, mode); ok {
			return true
		}
	}
	return false
}

// endpoint is where the engine is reached.
func (c PluginConfig) endpoint() string {
	if c.Endpoint != "" {
		return c.Endpoint
	}
	return DefaultEndpoint
}

func pluginErr(err error) error { return fmt.Errorf("docker plugin config: %w", err) }

// checkKnown refuses the first key (in sorted order) of m that is not in
// ok: by name as not supported yet when it is in refused (a key Nomad
// has), as unknown otherwise.
func checkKnown(what string, m map[string]any, ok, refused []string) error {
	for _, k := range slices.Sorted(mapKeys(m)) {
		if slices.Contains(ok, k) {
			continue
		}
		if slices.Contains(refused, k) {
			return &drivers.ValidationError{Err: fmt.Errorf("docker: %s key %q is not supported by nomadq yet", what, k)}
		}
		allowed := append(slices.Clone(ok), refused...)
		sort.Strings(allowed)
		return &drivers.ValidationError{Err: fmt.Errorf("docker: unknown %s key %q (Nomad's keys: %s)", what, k, strings.Join(allowed, ", "))}
	}
	return nil
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// block returns the block m[key]: decoders hand a block over as a map or
// as a list of one map (HCL's repeated block form). nil when absent.
func block(m map[string]any, key string) (map[string]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	switch b := v.(type) {
	case map[string]any:
		return b, nil
	case []map[string]any:
		if len(b) == 1 {
			return b[0], nil
		}
		if len(b) == 0 {
			return nil, nil
		}
	case []any:
		if len(b) == 0 {
			return nil, nil
		}
		if len(b) == 1 {
			if mm, ok := b[0].(map[string]any); ok {
				return mm, nil
			}
		}
	}
	return nil, &drivers.ValidationError{Err: fmt.Errorf("config key %q must be a single block, got %T", key, v)}
}

// boolKey returns m[key] as a bool; "true"/"false" strings are accepted
// as the agent's options carry them.
func boolKey(m map[string]any, key string) (bool, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return false, false, nil
	}
	switch b := v.(type) {
	case bool:
		return b, true, nil
	case string:
		switch b {
		case "true", "1":
			return true, true, nil
		case "false", "0":
			return false, true, nil
		}
	}
	return false, true, &drivers.ValidationError{Err: fmt.Errorf("config key %q must be a bool, got %v", key, v)}
}

// normalizeCaps upper-cases capability names and strips "CAP_", as
// Docker and Nomad accept either spelling.
func normalizeCaps(caps []string) []string {
	out := make([]string, 0, len(caps))
	for _, c := range caps {
		c = strings.ToUpper(strings.TrimSpace(c))
		out = append(out, strings.TrimPrefix(c, "CAP_"))
	}
	return out
}
