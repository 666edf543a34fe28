package docker

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/moby/moby/api/types/mount"
	"github.com/nomadq/nomadq/client/drivers"
)

// A task's volumes and mount blocks, as Nomad reads them: a relative host
// path is inside the task's directory; a host path outside the alloc dir,
// or a Docker volume, needs the plugin's volumes { enabled = true }.

// volumeSpec is one "src:dst[:mode]" entry of volumes.
type volumeSpec struct {
	src, dst, mode string
	// named says src is a volume of the task's volume_driver, not a path.
	named bool
}

// mountSpec is one mount block.
type mountSpec struct {
	m mount.Mount
}

// parseVolumes reads volumes; with a volume_driver their sources are
// volume names of that driver, which need volumes enabled, as in Nomad.
func parseVolumes(m map[string]any, pc PluginConfig, volumeDriver string) ([]volumeSpec, error) {
	raw, err := drivers.Strings(m, "volumes")
	if err != nil {
		return nil, err
	}
	if volumeDriver != "" && !pc.VolumesEnabled {
		return nil, invalid(`config key "volume_driver": volumes are not enabled; cannot use volume driver %q (the docker plugin's volumes { enabled = true } allows it)`, volumeDriver)
	}
	var out []volumeSpec
	for _, v := range raw {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
			return nil, invalid(`config key "volumes": %q must be "<host path>:<container path>[:<mode>]"`, v)
		}
		s := volumeSpec{src: parts[0], dst: parts[1]}
		if len(parts) == 3 {
			s.mode = parts[2]
		}
		if !path.IsAbs(s.dst) {
			return nil, invalid(`config key "volumes": %q: the container path must be absolute`, v)
		}
		s.named = volumeDriver != ""
		if filepath.IsAbs(s.src) && !pc.VolumesEnabled {
			return nil, invalid(`config key "volumes": %q: volumes are not enabled; cannot mount host path %q (the docker plugin's volumes { enabled = true } allows it)`, v, s.src)
		}
		out = append(out, s)
	}
	return out, nil
}

// parseMounts reads mount blocks (and the older mounts list, its alias).
func parseMounts(m map[string]any, pc PluginConfig) ([]mountSpec, error) {
	var out []mountSpec
	for _, key := range []string{"mount", "mounts"} {
		blocks, err := blockList(m, key)
		if err != nil {
			return nil, err
		}
		for i, b := range blocks {
			what := fmt.Sprintf("%s[%d]", key, i)
			if err := checkKnown("task config "+what, b, []string{"type", "target", "source", "readonly", "bind_options", "tmpfs_options", "volume_options"}, nil); err != nil {
				return nil, err
			}
			ms, err := parseMount(what, b, pc)
			if err != nil {
				return nil, err
			}
			out = append(out, ms)
		}
	}
	return out, nil
}

func parseMount(what string, b map[string]any, pc PluginConfig) (mountSpec, error) {
	var ms mountSpec
	typ, _, err := drivers.String(b, "type")
	if err != nil {
		return ms, err
	}
	if typ == "" {
		typ = "volume" // Nomad's default, for old job files
	}
	ms.m.Type = mount.Type(typ)
	if ms.m.Target, _, err = drivers.String(b, "target"); err != nil {
		return ms, err
	}
	if ms.m.Target == "" || !path.IsAbs(ms.m.Target) {
		return ms, invalid("config key %q: target %q must be an absolute path in the container", what, ms.m.Target)
	}
	if ms.m.Source, _, err = drivers.String(b, "source"); err != nil {
		return ms, err
	}
	if ms.m.ReadOnly, _, err = boolKey(b, "readonly"); err != nil {
		return ms, err
	}
	bo, err := block(b, "bind_options")
	if err != nil {
		return ms, err
	}
	to, err := block(b, "tmpfs_options")
	if err != nil {
		return ms, err
	}
	vo, err := block(b, "volume_options")
	if err != nil {
		return ms, err
	}
	if (bo != nil && typ != "bind") || (to != nil && typ != "tmpfs") || (vo != nil && typ != "volume") {
		return ms, invalid("config key %q: options of another mount type than %q", what, typ)
	}
	switch typ {
	case "bind":
		if ms.m.Source == "" {
			return ms, invalid("config key %q: a bind mount needs a source", what)
		}
		if filepath.IsAbs(ms.m.Source) && !pc.VolumesEnabled {
			return ms, invalid("config key %q: volumes are not enabled; cannot mount host path %q (the docker plugin's volumes { enabled = true } allows it)", what, ms.m.Source)
		}
		if bo != nil {
			if err := checkKnown("task config "+what+" bind_options", bo, []string{"propagation"}, nil); err != nil {
				return ms, err
			}
			p, _, err := drivers.String(bo, "propagation")
			if err != nil {
				return ms, err
			}
			ms.m.BindOptions = &mount.BindOptions{Propagation: mount.Propagation(p)}
		}
	case "tmpfs":
		if ms.m.Source != "" {
			return ms, invalid(`config key %q: a tmpfs mount has no source, got %q`, what, ms.m.Source)
		}
		if to != nil {
			if err := checkKnown("task config "+what+" tmpfs_options", to, []string{"size", "mode"}, nil); err != nil {
				return ms, err
			}
			size, _, err := drivers.Int(to, "size")
			if err != nil {
				return ms, err
			}
			mode, _, err := drivers.Int(to, "mode")
			if err != nil {
				return ms, err
			}
			ms.m.TmpfsOptions = &mount.TmpfsOptions{SizeBytes: int64(size), Mode: os.FileMode(mode)}
		}
	case "volume":
		if !pc.VolumesEnabled {
			return ms, invalid("config key %q: volumes are not enabled; cannot mount volume %q (the docker plugin's volumes { enabled = true } allows it)", what, ms.m.Source)
		}
		if vo != nil {
			if err := checkKnown("task config "+what+" volume_options", vo, []string{"no_copy", "labels"}, []string{"driver_config"}); err != nil {
				return ms, err
			}
			ms.m.VolumeOptions = &mount.VolumeOptions{}
			if ms.m.VolumeOptions.NoCopy, _, err = boolKey(vo, "no_copy"); err != nil {
				return ms, err
			}
			if ms.m.VolumeOptions.Labels, err = stringMap(vo, "labels"); err != nil {
				return ms, err
			}
		}
	default:
		return ms, invalid(`config key %q: type %q is not a mount type (allowed: "bind", "volume", "tmpfs")`, what, typ)
	}
	return ms, nil
}

// blockList returns m[key] as a list of blocks.
func blockList(m map[string]any, key string) ([]map[string]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	switch l := v.(type) {
	case map[string]any:
		return []map[string]any{l}, nil
	case []map[string]any:
		return l, nil
	case []any:
		out := make([]map[string]any, 0, len(l))
		for _, e := range l {
			b, ok := e.(map[string]any)
			if !ok {
				return nil, invalid("config key %q must be a list of blocks, got an element of %T", key, e)
			}
			out = append(out, b)
		}
		return out, nil
	}
	return nil, invalid("config key %q must be a list of blocks, got %T", key, v)
}

// hostSource resolves a host path as Nomad does: relative to the task's
// directory; without volumes enabled it must stay inside the alloc dir.
func hostSource(src, taskDir, allocDir string, volumesEnabled bool) (string, error) {
	if !filepath.IsAbs(src) {
		src = filepath.Join(taskDir, src)
	}
	src = filepath.Clean(src)
	if !volumesEnabled {
		rel, err := filepath.Rel(allocDir, src)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", &drivers.ValidationError{Err: fmt.Errorf("docker: volumes are not enabled; cannot mount host path %q outside the alloc dir", src)}
		}
	}
	return src, nil
}
