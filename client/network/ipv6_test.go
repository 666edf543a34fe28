package network

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// bridge_network_subnet_ipv6 adds a second host-local range set, so an
// alloc gets an address from each subnet, and a default IPv6 route.
func TestBridgeConflist_IPv6(t *testing.T) {
	b, err := BridgeConflist(BridgeConfig{Name: DefaultBridgeName, Subnet: DefaultBridgeSubnet, SubnetIPv6: "fd00:a110:c8::/120"})
	must.NoError(t, err)
	_, err = libcni.ConfListFromBytes(b)
	must.NoError(t, err)
	var raw struct {
		Plugins []struct {
			IPAM struct {
				Ranges [][]map[string]string `json:"ranges"`
				Routes []map[string]string   `json:"routes"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	must.NoError(t, json.Unmarshal(b, &raw))
	ipam := raw.Plugins[1].IPAM
	must.Eq(t, [][]map[string]string{{{"subnet": DefaultBridgeSubnet}}, {{"subnet": "fd00:a110:c8::/120"}}}, ipam.Ranges)
	must.Eq(t, []map[string]string{{"dst": "0.0.0.0/0"}, {"dst": "::/0"}}, ipam.Routes)

	// Without it, IPv4 only, as before.
	b, err = BridgeConflist(BridgeConfig{Name: DefaultBridgeName, Subnet: DefaultBridgeSubnet})
	must.NoError(t, err)
	must.NoError(t, json.Unmarshal(b, &raw))
	must.Len(t, 1, raw.Plugins[1].IPAM.Ranges)
	must.Eq(t, []map[string]string{{"dst": "0.0.0.0/0"}}, raw.Plugins[1].IPAM.Routes)
}

func TestBridgeConflist_IPv6Refused(t *testing.T) {
	for _, v := range []string{"fd00:a110:c8::", "10.0.0.0/24", "::ffff:10.0.0.0/120", "nope"} {
		_, err := BridgeConflist(BridgeConfig{Name: DefaultBridgeName, Subnet: DefaultBridgeSubnet, SubnetIPv6: v})
		must.EqError(t, err, `bridge_network_subnet_ipv6 "`+v+`" is not allowed: must be an IPv6 CIDR such as fd00:a110:c8::/120`)
	}
}

// A bridge alloc on a client with an IPv6 subnet has an address from it
// in its namespace and a default IPv6 route through the bridge, and the
// firewall plugin lets its traffic through ip6tables' FORWARD chain;
// teardown removes both rules and address.
func TestManager_SetupTeardownIPv6(t *testing.T) {
	if v, err := os.ReadFile("/proc/sys/net/ipv6/conf/all/disable_ipv6"); err != nil || strings.TrimSpace(string(v)) != "0" {
		t.Skip("IPv6 is disabled on this machine (net.ipv6.conf.all.disable_ipv6)")
	}
	if _, err := exec.LookPath("ip6tables-save"); err != nil {
		t.Skip("ip6tables is not installed")
	}
	const bridge, subnet6 = "nomadq-v6test", "fd00:a110:c8::/120"
	m := New(Config{
		CNIPath:  []string{"/opt/cni/bin", "/usr/lib/cni"},
		Bridge:   BridgeConfig{Name: bridge, Subnet: "172.26.250.0/24", SubnetIPv6: subnet6},
		StateDir: t.TempDir(),
	})
	if c := m.Fingerprint(); !c.Bridge {
		t.Skipf("bridge networking unavailable: %s (scripts/install-docker-test-deps.sh installs the plugins)", c.BridgeReason)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", bridge).Run() })
	ctx := context.Background()
	id := structs.GenerateUUID()
	st, err := m.Setup(ctx, id, Spec{Mode: ModeBridge})
	must.NoError(t, err)
	t.Cleanup(func() { _ = m.Teardown(ctx, id) })

	inNetns := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("nsenter", append([]string{"--net=" + st.NetnsPath, "ip"}, args...)...).CombinedOutput()
		must.NoError(t, err, must.Sprint(string(out)))
		return string(out)
	}
	_, network6, _ := net.ParseCIDR(subnet6)
	var addr6 string
	for _, f := range strings.Fields(inNetns("-6", "-o", "addr", "show", "scope", "global")) {
		if ip, _, err := net.ParseCIDR(f); err == nil && network6.Contains(ip) {
			addr6 = ip.String()
		}
	}
	must.NotEq(t, "", addr6, must.Sprint("no address from the IPv6 subnet in the alloc's namespace"))
	must.StrContains(t, inNetns("-6", "route", "show", "default"), "default via fd00:a110:c8::1")
	// The IPv4 address is still the one the alloc is known by.
	must.NotNil(t, net.ParseIP(st.Address).To4(), must.Sprintf("address %s", st.Address))

	ip6 := func() string {
		out, err := exec.Command("ip6tables-save").CombinedOutput()
		must.NoError(t, err, must.Sprint(string(out)))
		return string(out)
	}
	must.StrContains(t, ip6(), addr6)

	must.NoError(t, m.Teardown(ctx, id))
	must.False(t, strings.Contains(ip6(), addr6+"/"), must.Sprint("an ip6tables rule of the alloc's address is left"))
}
