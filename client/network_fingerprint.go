package client

import (
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/nomadq/nomadq/structs"
)

// fingerprintNetworkAndVolumes adds to the node the address its tasks are
// reached at, its dynamic port range and its host volumes. A host volume
// whose directory is missing stops the client, as in Nomad: a job placed
// on it would find nothing to mount.
func fingerprintNetworkAndVolumes(cfg *Config, n *structs.Node) error {
	ip, device, err := nodeIP(cfg)
	if err != nil {
		return err
	}
	bits := 32
	if net.ParseIP(ip).To4() == nil {
		bits = 128
	}
	n.NodeResources.Networks = []*structs.NetworkResource{{
		Mode:   structs.NetworkModeHost,
		Device: device,
		IP:     ip,
		CIDR:   fmt.Sprintf("%s/%d", ip, bits),
	}}
	if cfg.MinDynamicPort > 0 {
		n.NodeResources.MinDynamicPort = cfg.MinDynamicPort
	}
	if cfg.MaxDynamicPort > 0 {
		n.NodeResources.MaxDynamicPort = cfg.MaxDynamicPort
	}
	n.Attributes["unique.network.ip-address"] = ip
	if len(cfg.HostVolumes) > 0 {
		n.HostVolumes = make(map[string]*structs.ClientHostVolumeConfig, len(cfg.HostVolumes))
	}
	for _, v := range cfg.HostVolumes {
		fi, err := os.Stat(v.Path)
		if err != nil {
			return fmt.Errorf("host_volume %q: %w", v.Name, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("host_volume %q: path %q is not a directory", v.Name, v.Path)
		}
		c := *v
		n.HostVolumes[v.Name] = &c
	}
	n.ComputedClass = computedClass(n)
	return nil
}

// nodeIP is the first address of the configured interface, or the
// advertised address.
func nodeIP(cfg *Config) (ip, device string, err error) {
	if name := cfg.NetworkInterface; name != "" {
		iface, err := net.InterfaceByName(name)
		if err != nil {
			return "", "", fmt.Errorf("network_interface %q: %w", name, err)
		}
		addrs, err := iface.Addrs()
		if err != nil {
			return "", "", fmt.Errorf("network_interface %q: %w", name, err)
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				return ipn.IP.String(), name, nil
			}
		}
		return "", "", fmt.Errorf("network_interface %q has no address", name)
	}
	ip = cfg.AdvertiseIP
	if ip == "" || ip == "0.0.0.0" || ip == "::" {
		ip = "127.0.0.1"
	}
	return ip, "", nil
}

// cpuSet lists the cores this process may run on, which are the ones
// allocations can reserve.
func cpuSet() []uint16 {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		out := make([]uint16, runtime.NumCPU())
		for i := range out {
			out[i] = uint16(i)
		}
		return out
	}
	var out []uint16
	for i := 0; i < len(set)*64 && len(out) < set.Count(); i++ {
		if set.IsSet(i) {
			out = append(out, uint16(i))
		}
	}
	return out
}
