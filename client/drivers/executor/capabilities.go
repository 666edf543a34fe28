package executor

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/moby/sys/capability"
)

// capabilities maps the names tasks use (without "CAP_", lower case) to
// the kernel's numbers: moby/sys/capability's names, as Nomad's.
var capabilities = func() map[string]capability.Cap {
	m := make(map[string]capability.Cap)
	for _, c := range capability.ListKnown() {
		m[c.String()] = c
	}
	return m
}()

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

func capabilitySet(names []string) ([]capability.Cap, error) {
	s := make([]capability.Cap, 0, len(names))
	for _, n := range names {
		c, ok := capabilities[normalizeCap(n)]
		if !ok {
			return nil, fmt.Errorf("unknown capability %q", n)
		}
		if !slices.Contains(s, c) {
			s = append(s, c)
		}
	}
	return s, nil
}

// dropBoundingSet removes every capability not in keep from the calling
// thread's bounding set, which its exec'd task inherits.
func dropBoundingSet(keep []capability.Cap) error {
	supported, err := capability.ListSupported()
	if err != nil {
		return fmt.Errorf("list capabilities: %w", err)
	}
	drop := slices.DeleteFunc(supported, func(c capability.Cap) bool { return slices.Contains(keep, c) })
	if err := capability.DropBound(drop...); err != nil {
		return fmt.Errorf("drop capabilities from the bounding set: %w", err)
	}
	return nil
}

// raiseAmbient gives a non-root task the capabilities in set: they must
// be permitted and inheritable before they can be ambient.
func raiseAmbient(set []capability.Cap) error {
	caps, err := capability.NewPid2(0)
	if err != nil {
		return err
	}
	caps.Set(capability.PERMITTED|capability.INHERITABLE|capability.EFFECTIVE, set...)
	if err := caps.Apply(capability.CAPS); err != nil {
		return fmt.Errorf("set capabilities: %w", err)
	}
	if err := capability.SetAmbient(true, set...); err != nil {
		return fmt.Errorf("raise ambient capabilities: %w", err)
	}
	return nil
}
