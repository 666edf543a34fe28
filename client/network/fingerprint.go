package network

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/containernetworking/cni/libcni"

	"github.com/nomadq/nomadq/structs"
)

// Capabilities is what the node can give allocs, for its fingerprint.
type Capabilities struct {
	// Bridge is set when the bridge network can be set up here.
	Bridge bool
	// BridgeReason says why not, when Bridge is false.
	BridgeReason string
	// CNINetworks are the names of the operator's network lists.
	CNINetworks []string
	// PluginVersions maps each CNI plugin found to its version
	// ("unknown" when it does not tell), as the node's
	// plugins.cni.version.<name> attributes.
	PluginVersions map[string]string
}

var versionRE = regexp.MustCompile(`v\d+\.\d+\.\d+`)

// Fingerprint looks for the CNI plugins and network lists. The bridge
// network needs root, the bridge plugins in CNIPath and iptables.
func (m *Manager) Fingerprint() Capabilities {
	c := Capabilities{PluginVersions: map[string]string{}}
	for _, dir := range m.cfg.CNIPath {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if _, seen := c.PluginVersions[e.Name()]; seen || e.IsDir() {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
				continue
			}
			c.PluginVersions[e.Name()] = pluginVersion(p)
		}
	}
	var missing []string
	for _, p := range BridgePlugins {
		if _, ok := c.PluginVersions[p]; !ok {
			missing = append(missing, p)
		}
	}
	switch {
	case runtime.GOOS != "linux":
		c.BridgeReason = "bridge networking needs Linux"
	case os.Geteuid() != 0:
		c.BridgeReason = "bridge networking needs the client to run as root"
	case len(missing) > 0:
		c.BridgeReason = "CNI plugins " + strings.Join(missing, ", ") + " not found in cni_path " + strings.Join(m.cfg.CNIPath, ":")
	default:
		if _, err := exec.LookPath("iptables"); err != nil {
			c.BridgeReason = "iptables not found"
		} else if err := m.cfg.Bridge.Validate(); err != nil {
			c.BridgeReason = err.Error()
		} else {
			c.Bridge = true
		}
	}
	if m.cfg.ConfigDir != "" {
		files, _ := libcni.ConfFiles(m.cfg.ConfigDir, []string{".conf", ".conflist", ".json"})
		seen := map[string]bool{}
		for _, f := range files {
			var name string
			if strings.HasSuffix(f, ".conflist") {
				if l, err := libcni.ConfListFromFile(f); err == nil {
					name = l.Name
				}
			} else if n, err := libcni.ConfFromFile(f); err == nil {
				name = n.Network.Name
			}
			if name != "" && !seen[name] {
				seen[name] = true
				c.CNINetworks = append(c.CNINetworks, name)
			}
		}
		sort.Strings(c.CNINetworks)
	}
	return c
}

// pluginVersion asks a plugin its version the way its maintainers print
// it when run with no CNI_COMMAND ("CNI bridge plugin v1.1.1").
func pluginVersion(path string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path)
	cmd.Env = []string{}
	out, _ := cmd.CombinedOutput()
	if v := versionRE.FindString(string(out)); v != "" {
		return v
	}
	// Nomad's word for a plugin that does not say (Debian's builds print
	// "version unknown").
	return "unknown"
}

// Apply adds the node's networks as Nomad fingerprints them: a network of
// mode "bridge" when the bridge can be set up, one of mode "cni/<name>"
// per operator network, and the plugins.cni.version.<plugin> attributes.
// The scheduler places a group only on a node with its network mode.
func (c Capabilities) Apply(n *structs.Node) {
	if n.NodeResources == nil {
		n.NodeResources = &structs.NodeResources{}
	}
	if c.Bridge {
		n.NodeResources.Networks = append(n.NodeResources.Networks, &structs.NetworkResource{Mode: ModeBridge})
	}
	for _, name := range c.CNINetworks {
		n.NodeResources.Networks = append(n.NodeResources.Networks, &structs.NetworkResource{Mode: ModeCNIPrefix + name})
	}
	if n.Attributes == nil {
		n.Attributes = map[string]string{}
	}
	for p, v := range c.PluginVersions {
		n.Attributes["plugins.cni.version."+p] = v
	}
}
