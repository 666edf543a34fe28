package dockertest

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Options are what an engine is started with beyond the defaults.
type Options struct {
	// Bridge gives the engine a bridge of its own (a fresh one with a
	// small private subnet no address or route of the machine's uses)
	// and iptables, so docker's "bridge" network mode and published
	// ports work. Stop deletes the bridge and the iptables chains and
	// rules the engine made.
	Bridge bool
}

// bridgeNet is an engine's own bridge and the firewall state to restore.
type bridgeNet struct {
	name   string
	prefix netip.Prefix
	// hadDockerChains: another engine's DOCKER chains were there before
	// ours started, so only the rules naming our bridge are removed.
	hadDockerChains bool
	// lock is held from before the firewall is read until the engine's
	// rules are removed: two test engines with iptables, in two test
	// binaries, would otherwise share DOCKER chains that the first to
	// stop removes under the other.
	lock *os.File
}

// bridgeLockPath serialises the test engines with a bridge on a machine.
var bridgeLockPath = filepath.Join(os.TempDir(), "nomadq-dockertest-bridge.lock")

// newBridge creates an up bridge with the first address of a free /24
// in 10.0.0.0/8.
func newBridge() (*bridgeNet, error) {
	for _, tool := range []string{"ip", "iptables", "iptables-save"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s not found (Debian packages iproute2 and iptables): %w", tool, err)
		}
	}
	lock, err := os.OpenFile(bridgeLockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		lock.Close()
		return nil, fmt.Errorf("lock %s: %w", bridgeLockPath, err)
	}
	sweepStaleBridges()
	used, err := usedPrefixes()
	if err != nil {
		lock.Close()
		return nil, err
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		lock.Close()
		return nil, err
	}
	n := binary.BigEndian.Uint32(b[:])
	br := &bridgeNet{name: fmt.Sprintf("nqdk%05x", n&0xfffff), lock: lock}
	for i := uint32(0); i < 256; i++ {
		// 10.200.0.0 to 10.249.255.0: away from the ranges other tools
		// take by default (docker's 172.17/16, CNI's 10.88 and 172.26).
		k := (n + i*7919) % (50 * 256)
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(200 + k/256), byte(k % 256), 0}), 24)
		if !overlapsAny(p, used) {
			br.prefix = p
			break
		}
	}
	if !br.prefix.IsValid() {
		lock.Close()
		return nil, errors.New("no free /24 in 10.200.0.0/16 to 10.249.0.0/16 for the test bridge")
	}
	br.hadDockerChains = strings.Contains(iptablesSave("filter")+iptablesSave("nat"), ":DOCKER")
	gw := br.prefix.Addr().Next()
	for _, args := range [][]string{
		{"link", "add", br.name, "type", "bridge"},
		{"addr", "add", netip.PrefixFrom(gw, 24).String(), "dev", br.name},
		{"link", "set", br.name, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			br.remove()
			return nil, fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return br, nil
}

// sweepStaleBridges removes the bridges, and the iptables rules naming
// them, of test engines whose test binary died before Stop: with the lock
// held, no engine with a bridge is running.
func sweepStaleBridges() {
	ifaces, err := net.Interfaces()
	if err != nil {
		return
	}
	for _, ifc := range ifaces {
		if !strings.HasPrefix(ifc.Name, "nqdk") {
			continue
		}
		br := &bridgeNet{name: ifc.Name, hadDockerChains: true}
		if addrs, err := ifc.Addrs(); err == nil {
			for _, a := range addrs {
				if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is4() {
					br.prefix = p.Masked()
				}
			}
		}
		br.remove()
	}
}

// usedPrefixes are the machine's interface networks and routes.
func usedPrefixes() ([]netip.Prefix, error) {
	var used []netip.Prefix
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is4() {
			used = append(used, p.Masked())
		}
	}
	out, err := exec.Command("ip", "-4", "route", "show", "table", "all").Output()
	if err != nil {
		return nil, fmt.Errorf("ip route: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		dst := f[0]
		if dst == "broadcast" || dst == "local" || dst == "unicast" {
			if len(f) < 2 {
				continue
			}
			dst = f[1]
		}
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		if p, err := netip.ParsePrefix(dst); err == nil && p.Bits() > 0 {
			used = append(used, p.Masked())
		}
	}
	return used, nil
}

func overlapsAny(p netip.Prefix, used []netip.Prefix) bool {
	for _, u := range used {
		if u.Overlaps(p) {
			return true
		}
	}
	return false
}

// iptablesSave is one table's rules, "" when it cannot be read.
func iptablesSave(table string) string {
	out, _ := exec.Command("iptables-save", "-t", table).Output()
	return string(out)
}

// remove deletes what dockerd added to iptables for this bridge (and,
// when no other engine's were there before, its DOCKER chains with the
// rules jumping to them), then the bridge itself.
func (br *bridgeNet) remove() {
	for _, table := range []string{"filter", "nat"} {
		var chains []string
		for _, line := range strings.Split(iptablesSave(table), "\n") {
			switch {
			case strings.HasPrefix(line, ":DOCKER") && !br.hadDockerChains:
				chains = append(chains, strings.Fields(line[1:])[0])
			case strings.HasPrefix(line, "-A "):
				if br.ours(line) {
					args := append([]string{"-w", "-t", table, "-D"}, splitRule(line[3:])...)
					_ = exec.Command("iptables", args...).Run()
				}
			}
		}
		for _, c := range chains {
			_ = exec.Command("iptables", "-w", "-t", table, "-F", c).Run()
		}
		for _, c := range chains {
			_ = exec.Command("iptables", "-w", "-t", table, "-X", c).Run()
		}
	}
	_ = exec.Command("ip", "link", "del", br.name).Run()
	if br.lock != nil {
		// Closing the file releases the lock.
		br.lock.Close()
	}
}

// ours reports whether an iptables-save rule line is one our engine made.
func (br *bridgeNet) ours(line string) bool {
	for _, f := range splitRule(line) {
		if f == br.name || (br.prefix.IsValid() && f == br.prefix.String()) {
			return true
		}
		if !br.hadDockerChains && strings.HasPrefix(f, "DOCKER") {
			return true
		}
	}
	return false
}

// splitRule splits an iptables-save rule into arguments, keeping quoted
// words (comments) whole.
func splitRule(s string) []string {
	var args []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && inQuote && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == '"':
			inQuote, have = !inQuote, true
		case c == ' ' && !inQuote:
			if have || cur.Len() > 0 {
				args = append(args, cur.String())
			}
			cur.Reset()
			have = false
		default:
			cur.WriteByte(c)
		}
	}
	if have || cur.Len() > 0 {
		args = append(args, cur.String())
	}
	return args
}

// BridgeName is the name of the engine's own bridge, "" when it was
// started without one.
func (e *Engine) BridgeName() string {
	if e.bridge == nil {
		return ""
	}
	return e.bridge.name
}

// FirewallLeftovers are the iptables lines (filter and nat tables) that
// name a DOCKER chain or the bridge: after Stop of the only engine with a
// bridge, none.
func FirewallLeftovers(bridge string) []string {
	var left []string
	for _, table := range []string{"filter", "nat"} {
		for _, line := range strings.Split(iptablesSave(table), "\n") {
			if strings.Contains(line, "DOCKER") || (bridge != "" && strings.Contains(line, bridge)) {
				left = append(left, table+": "+line)
			}
		}
	}
	return left
}
