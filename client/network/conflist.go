// Package network gives an allocation a network namespace of its own, set
// up by CNI plugins: the bridge network Nomad builds for
// network { mode = "bridge" }, or a network the operator defined in the
// client's cni_config_dir for mode "cni/<name>". It creates and removes
// the namespace, runs the plugins' ADD and DEL, and keeps a record of
// every namespace it made so that a restarted client can re-attach to it
// or clean it up.
package network

import (
	"encoding/json"
	"fmt"
	"net"
)

// Defaults of the bridge network, Nomad's.
const (
	DefaultBridgeName   = "nomad"
	DefaultBridgeSubnet = "172.26.64.0/20"
	// AdminChainName is the iptables chain the firewall plugin lets
	// operators add their own rules to, Nomad's name for it.
	AdminChainName = "NOMAD-ADMIN"
	// bridgeNetworkName is the name of the generated network list; the
	// CNI cache and the firewall plugin's rules carry it.
	bridgeNetworkName = "nomad"
	// cniVersion is the spec version of the generated list, the one
	// Nomad writes; Debian's plugins (1.1) speak it.
	cniVersion = "0.4.0"
)

// BridgeConfig is the client's bridge network configuration.
type BridgeConfig struct {
	// Name is the Linux bridge the allocs' veths hang off.
	Name string
	// Subnet is where host-local IPAM takes the allocs' addresses.
	Subnet string
	// HairpinMode lets an alloc reach itself through its own host port.
	HairpinMode bool
	// SubnetIPv6, when set, is an IPv6 range host-local also gives each
	// alloc an address from, with a default IPv6 route through the
	// bridge, as Nomad's bridge_network_subnet_ipv6.
	SubnetIPv6 string
}

// Validate checks the bridge configuration as the client config reads it.
func (c BridgeConfig) Validate() error {
	if _, _, err := net.ParseCIDR(c.Subnet); err != nil {
		return fmt.Errorf("bridge_network_subnet %q is not allowed: must be a CIDR such as %s", c.Subnet, DefaultBridgeSubnet)
	}
	if c.SubnetIPv6 != "" {
		ip, _, err := net.ParseCIDR(c.SubnetIPv6)
		if err != nil || ip.To4() != nil {
			return fmt.Errorf("bridge_network_subnet_ipv6 %q is not allowed: must be an IPv6 CIDR such as fd00:a110:c8::/120", c.SubnetIPv6)
		}
	}
	if c.Name == "" || len(c.Name) > 15 {
		return fmt.Errorf("bridge_network_name %q is not allowed: must be a Linux interface name of 1 to 15 characters", c.Name)
	}
	return nil
}

// BridgePlugins are the CNI plugins the bridge network needs.
var BridgePlugins = []string{"loopback", "bridge", "host-local", "firewall", "portmap"}

type conflist struct {
	CNIVersion string `json:"cniVersion"`
	Name       string `json:"name"`
	Plugins    []any  `json:"plugins"`
}

type pluginType struct {
	Type string `json:"type"`
}

type bridgePlugin struct {
	Type         string `json:"type"`
	Bridge       string `json:"bridge"`
	IPMasq       bool   `json:"ipMasq"`
	IsGateway    bool   `json:"isGateway"`
	ForceAddress bool   `json:"forceAddress"`
	HairpinMode  bool   `json:"hairpinMode"`
	IPAM         ipam   `json:"ipam"`
}

type ipam struct {
	Type    string        `json:"type"`
	Ranges  [][]ipamRange `json:"ranges"`
	Routes  []ipamRoute   `json:"routes"`
	DataDir string        `json:"dataDir,omitempty"`
}

type ipamRange struct {
	Subnet string `json:"subnet"`
}

type ipamRoute struct {
	Dst string `json:"dst"`
}

type firewallPlugin struct {
	Type           string `json:"type"`
	Backend        string `json:"backend"`
	AdminChainName string `json:"iptablesAdminChainName"`
}

type portmapPlugin struct {
	Type         string          `json:"type"`
	Capabilities map[string]bool `json:"capabilities"`
	SNAT         bool            `json:"snat"`
}

// BridgeConflist returns the CNI network list of the bridge network, the
// one Nomad generates: loopback, a bridge acting as the allocs' gateway
// with masquerading, host-local addresses from the subnet and from the
// IPv6 subnet if there is one (default routes through the bridge), the
// firewall plugin letting the allocs' traffic through the FORWARD chain
// (ip6tables' too for IPv6 addresses), and portmap for the group's
// ports.
func BridgeConflist(c BridgeConfig) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	// One range set per family: host-local gives an address from each.
	ranges := [][]ipamRange{{{Subnet: c.Subnet}}}
	routes := []ipamRoute{{Dst: "0.0.0.0/0"}}
	if c.SubnetIPv6 != "" {
		ranges = append(ranges, []ipamRange{{Subnet: c.SubnetIPv6}})
		routes = append(routes, ipamRoute{Dst: "::/0"})
	}
	l := conflist{
		CNIVersion: cniVersion,
		Name:       bridgeNetworkName,
		Plugins: []any{
			pluginType{Type: "loopback"},
			bridgePlugin{
				Type:         "bridge",
				Bridge:       c.Name,
				IPMasq:       true,
				IsGateway:    true,
				ForceAddress: true,
				HairpinMode:  c.HairpinMode,
				IPAM: ipam{
					Type:    "host-local",
					Ranges:  ranges,
					Routes:  routes,
					DataDir: "/var/run/cni",
				},
			},
			firewallPlugin{Type: "firewall", Backend: "iptables", AdminChainName: AdminChainName},
			portmapPlugin{Type: "portmap", Capabilities: map[string]bool{"portMappings": true}, SNAT: true},
		},
	}
	return json.MarshalIndent(l, "", "\t")
}
