package executor

import (
	"testing"

	"github.com/moby/sys/capability"
	"github.com/opencontainers/cgroups"
	"github.com/shoenig/test/must"
)

// A task's reservation becomes its cgroup's limits: memory_max, when set,
// is the hard limit and memory the soft one.
func TestLimits_Resources(t *testing.T) {
	cases := []struct {
		name string
		in   Limits
		want cgroups.Resources
	}{
		{"none", Limits{}, cgroups.Resources{}},
		{"memory is the hard limit", Limits{CPUShares: 500, MemoryMB: 256}, cgroups.Resources{CpuShares: 500, Memory: 256 << 20}},
		{"memory_max is the hard limit", Limits{MemoryMB: 256, MemoryMaxMB: 1024}, cgroups.Resources{Memory: 1024 << 20, MemoryReservation: 256 << 20}},
		{"shares have a floor of 2", Limits{CPUShares: 1}, cgroups.Resources{CpuShares: 2}},
		{"cores become a cpuset", Limits{Cores: []uint16{0, 3}}, cgroups.Resources{CpusetCpus: "0,3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, *tc.in.resources())
		})
	}
}

// Tasks name capabilities as Nomad does: moby/sys/capability's names,
// in any case, with or without "CAP_".
func TestCapabilitySet(t *testing.T) {
	got, err := capabilitySet([]string{"CAP_NET_RAW", "chown", "Sys_Admin", "checkpoint_restore", "chown"})
	must.NoError(t, err)
	must.Eq(t, []capability.Cap{capability.CAP_NET_RAW, capability.CAP_CHOWN, capability.CAP_SYS_ADMIN, capability.CAP_CHECKPOINT_RESTORE}, got)
	_, err = capabilitySet([]string{"flying"})
	must.EqError(t, err, `unknown capability "flying"`)
	must.MapLen(t, 41, capabilities) // CAP_CHOWN (0) to CAP_CHECKPOINT_RESTORE (40)
}

func TestTaskCapabilities(t *testing.T) {
	cases := []struct {
		name      string
		add, drop []string
		want      []string
		err       string
	}{
		{"defaults", nil, nil, DefaultCapabilities, ""},
		{"drop all add one", []string{"CAP_NET_BIND_SERVICE"}, []string{"all"}, []string{"net_bind_service"}, ""},
		{"drop one", nil, []string{"kill", "mknod"}, []string{"audit_write", "chown", "dac_override", "fowner", "fsetid", "net_bind_service", "setfcap", "setgid", "setpcap", "setuid", "sys_chroot"}, ""},
		{"add outside the allowed set", []string{"sys_admin"}, nil, nil, `cap_add: capability "sys_admin" is not allowed`},
		{"unknown", []string{"flying"}, nil, nil, `cap_add: unknown capability "flying"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := TaskCapabilities(DefaultCapabilities, tc.add, tc.drop)
			if tc.err != "" {
				must.ErrorContains(t, err, tc.err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
}
