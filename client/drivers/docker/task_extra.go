package docker

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/nomadq/nomadq/client/drivers"
)

// extraConfig holds the task keys about devices, health checks, the
// runtime, namespaces and image loading.
type extraConfig struct {
	devices             []container.DeviceMapping
	disableHealthchecks bool
	runtime             string
	usernsMode          string
	cgroupnsMode        string
	load                string
	existsAttempts      int
}

func parseExtraKeys(m map[string]any, pc PluginConfig) (extraConfig, error) {
	x := extraConfig{existsAttempts: pc.ContainerExistsAttempts}
	if x.existsAttempts < 1 {
		x.existsAttempts = 1
	}
	devs, err := blockList(m, "devices")
	if err != nil {
		return x, err
	}
	for i, b := range devs {
		what := fmt.Sprintf("devices[%d]", i)
		if err := checkKnown("task config "+what, b, []string{"host_path", "container_path", "cgroup_permissions"}, nil); err != nil {
			return x, err
		}
		var dm container.DeviceMapping
		for _, f := range []struct {
			key string
			dst *string
		}{{"host_path", &dm.PathOnHost}, {"container_path", &dm.PathInContainer}, {"cgroup_permissions", &dm.CgroupPermissions}} {
			if *f.dst, _, err = drivers.String(b, f.key); err != nil {
				return x, err
			}
		}
		if dm.PathOnHost == "" {
			return x, invalid("config key %q: host_path is required", what)
		}
		if dm.PathInContainer == "" {
			dm.PathInContainer = dm.PathOnHost
		}
		if dm.CgroupPermissions == "" {
			dm.CgroupPermissions = "rwm"
		}
		if strings.Trim(dm.CgroupPermissions, "rwm") != "" {
			return x, invalid("config key %q: cgroup_permissions %q may only hold r, w and m", what, dm.CgroupPermissions)
		}
		x.devices = append(x.devices, dm)
	}
	hc, err := block(m, "healthchecks")
	if err != nil {
		return x, err
	}
	if hc != nil {
		if err := checkKnown("task config healthchecks", hc, []string{"disable"}, nil); err != nil {
			return x, err
		}
		if x.disableHealthchecks, _, err = boolKey(hc, "disable"); err != nil {
			return x, err
		}
	}
	if x.runtime, _, err = drivers.String(m, "runtime"); err != nil {
		return x, err
	}
	if x.runtime != "" && !slices.Contains(pc.AllowRuntimes, x.runtime) {
		return x, invalid(`config key "runtime": %q is not allowed by the docker plugin's allow_runtimes (%s)`, x.runtime, strings.Join(pc.AllowRuntimes, ", "))
	}
	if x.usernsMode, _, err = drivers.String(m, "userns_mode"); err != nil {
		return x, err
	}
	if !pc.modeAllowed("userns", x.usernsMode) {
		return x, invalid(`config key "userns_mode": %q is not allowed: neither the docker plugin's allow_privileged nor its allowed_modes.userns allow it on this client`, x.usernsMode)
	}
	if x.cgroupnsMode, _, err = drivers.String(m, "cgroupns"); err != nil {
		return x, err
	}
	if x.cgroupnsMode != "" && x.cgroupnsMode != "host" && x.cgroupnsMode != "private" {
		return x, invalid(`config key "cgroupns": %q is not allowed (allowed: "host", "private")`, x.cgroupnsMode)
	}
	if x.load, _, err = drivers.String(m, "load"); err != nil {
		return x, err
	}
	if x.load != "" && (filepath.IsAbs(x.load) || strings.HasPrefix(filepath.Clean(x.load), "..")) {
		return x, invalid(`config key "load": %q must be a path inside the task's local dir`, x.load)
	}
	n, ok, err := drivers.Int(m, "container_exists_attempts")
	if err != nil {
		return x, err
	}
	if ok {
		if n < 1 {
			return x, invalid(`config key "container_exists_attempts": must be at least 1, got %d`, n)
		}
		x.existsAttempts = n
	}
	return x, nil
}
