package executor

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// capabilities maps the names tasks use (without "CAP_", lower case) to
// the kernel's numbers.
var capabilities = map[string]int{
	"chown": unix.CAP_CHOWN, "dac_override": unix.CAP_DAC_OVERRIDE, "dac_read_search": unix.CAP_DAC_READ_SEARCH,
	"fowner": unix.CAP_FOWNER, "fsetid": unix.CAP_FSETID, "kill": unix.CAP_KILL, "setgid": unix.CAP_SETGID,
	"setuid": unix.CAP_SETUID, "setpcap": unix.CAP_SETPCAP, "linux_immutable": unix.CAP_LINUX_IMMUTABLE,
	"net_bind_service": unix.CAP_NET_BIND_SERVICE, "net_broadcast": unix.CAP_NET_BROADCAST,
	"net_admin": unix.CAP_NET_ADMIN, "net_raw": unix.CAP_NET_RAW, "ipc_lock": unix.CAP_IPC_LOCK,
	"ipc_owner": unix.CAP_IPC_OWNER, "sys_module": unix.CAP_SYS_MODULE, "sys_rawio": unix.CAP_SYS_RAWIO,
	"sys_chroot": unix.CAP_SYS_CHROOT, "sys_ptrace": unix.CAP_SYS_PTRACE, "sys_pacct": unix.CAP_SYS_PACCT,
	"sys_admin": unix.CAP_SYS_ADMIN, "sys_boot": unix.CAP_SYS_BOOT, "sys_nice": unix.CAP_SYS_NICE,
	"sys_resource": unix.CAP_SYS_RESOURCE, "sys_time": unix.CAP_SYS_TIME, "sys_tty_config": unix.CAP_SYS_TTY_CONFIG,
	"mknod": unix.CAP_MKNOD, "lease": unix.CAP_LEASE, "audit_write": unix.CAP_AUDIT_WRITE,
	"audit_control": unix.CAP_AUDIT_CONTROL, "setfcap": unix.CAP_SETFCAP, "mac_override": unix.CAP_MAC_OVERRIDE,
	"mac_admin": unix.CAP_MAC_ADMIN, "syslog": unix.CAP_SYSLOG, "wake_alarm": unix.CAP_WAKE_ALARM,
	"block_suspend": unix.CAP_BLOCK_SUSPEND, "audit_read": unix.CAP_AUDIT_READ, "perfmon": unix.CAP_PERFMON,
	"bpf": unix.CAP_BPF, "checkpoint_restore": unix.CAP_CHECKPOINT_RESTORE,
}

// DefaultCapabilities are the capabilities an exec task may hold, Nomad's
// default allow list for the exec driver.
var DefaultCapabilities = []string{
	"audit_write", "chown", "dac_override", "fowner", "fsetid", "kill", "mknod",
	"net_bind_service", "setfcap", "setgid", "setpcap", "setuid", "sys_chroot",
}

func normalizeCap(name string) string {
	return strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "cap_")
}

// TaskCapabilities applies a task's cap_add and cap_drop to the allowed
// set: cap_add may only name allowed capabilities, cap_drop any or "all".
func TaskCapabilities(allowed, add, drop []string) ([]string, error) {
	set := map[string]bool{}
	for _, c := range allowed {
		set[normalizeCap(c)] = true
	}
	out := map[string]bool{}
	for c := range set {
		out[c] = true
	}
	for _, c := range drop {
		n := normalizeCap(c)
		if n == "all" {
			clear(out)
			continue
		}
		if _, ok := capabilities[n]; !ok {
			return nil, fmt.Errorf("cap_drop: unknown capability %q", c)
		}
		delete(out, n)
	}
	for _, c := range add {
		n := normalizeCap(c)
		if _, ok := capabilities[n]; !ok {
			return nil, fmt.Errorf("cap_add: unknown capability %q", c)
		}
		if !set[n] {
			return nil, fmt.Errorf("cap_add: capability %q is not allowed (allowed: %s)", c, strings.Join(slices.Sorted(maps.Keys(set)), ", "))
		}
		out[n] = true
	}
	return slices.Sorted(maps.Keys(out)), nil
}

func capabilitySet(names []string) (map[int]bool, error) {
	s := make(map[int]bool, len(names))
	for _, n := range names {
		c, ok := capabilities[normalizeCap(n)]
		if !ok {
			return nil, fmt.Errorf("unknown capability %q", n)
		}
		s[c] = true
	}
	return s, nil
}

// dropBoundingSet removes every capability not in keep from the calling
// thread's bounding set, which its exec'd task inherits.
func dropBoundingSet(keep map[int]bool) error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if keep[c] {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	return nil
}

// raiseAmbient gives a non-root task the capabilities in set: they must
// be permitted and inheritable before they can be ambient.
func raiseAmbient(set map[int]bool) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	for c := range set {
		data[c/32].Permitted |= 1 << uint(c%32)
		data[c/32].Inheritable |= 1 << uint(c%32)
		data[c/32].Effective |= 1 << uint(c%32)
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("set capabilities: %w", err)
	}
	for c := range set {
		if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, uintptr(c), 0, 0); err != nil {
			return fmt.Errorf("raise ambient capability %d: %w", c, err)
		}
	}
	return nil
}
