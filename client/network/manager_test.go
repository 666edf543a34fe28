package network

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// testManager returns a manager on the node's real CNI plugins, skipping
// where the bridge network cannot be set up.
func testManager(t *testing.T) *Manager {
	t.Helper()
	m := New(Config{
		CNIPath:  []string{"/opt/cni/bin", "/usr/lib/cni"},
		Bridge:   BridgeConfig{Name: DefaultBridgeName, Subnet: DefaultBridgeSubnet},
		StateDir: t.TempDir(),
	})
	if c := m.Fingerprint(); !c.Bridge {
		t.Skipf("bridge networking unavailable: %s (scripts/install-docker-test-deps.sh installs the plugins)", c.BridgeReason)
	}
	return m
}

func iptablesSave(t *testing.T) string {
	out, err := exec.Command("iptables-save").CombinedOutput()
	must.NoError(t, err, must.Sprint(string(out)))
	return string(out)
}

func TestManager_SetupTeardown(t *testing.T) {
	m := testManager(t)
	ctx := context.Background()
	id := structs.GenerateUUID()
	st, err := m.Setup(ctx, id, Spec{Mode: ModeBridge, Ports: []PortMapping{{Label: "http", HostPort: 31999, ContainerPort: 8080}}})
	must.NoError(t, err)
	t.Cleanup(func() { _ = m.Teardown(ctx, id) })
	_, subnet, _ := net.ParseCIDR(DefaultBridgeSubnet)
	must.True(t, subnet.Contains(net.ParseIP(st.Address)), must.Sprintf("address %s", st.Address))
	must.Eq(t, filepath.Join(DefaultNetnsDir, id), st.NetnsPath)
	must.True(t, isNetns(st.NetnsPath))
	must.StrContains(t, iptablesSave(t), st.Address)

	// A later manager (a restarted client) finds it.
	again := New(m.cfg)
	got, ok := again.Restore(id)
	must.True(t, ok)
	must.Eq(t, st.Address, got.Address)

	must.NoError(t, again.Teardown(ctx, id))
	_, err = os.Stat(st.NetnsPath)
	must.True(t, os.IsNotExist(err))
	rules := iptablesSave(t)
	must.False(t, strings.Contains(rules, st.Address+"/"), must.Sprint("an iptables rule of the alloc's address is left"))
	must.False(t, strings.Contains(rules, id), must.Sprint("an iptables rule naming the alloc is left"))
	must.SliceEmpty(t, again.Recorded())
	// Idempotent.
	must.NoError(t, again.Teardown(ctx, id))
}

func TestManager_CleanLeftovers(t *testing.T) {
	m := testManager(t)
	ctx := context.Background()
	keep, gone := structs.GenerateUUID(), structs.GenerateUUID()
	for _, id := range []string{keep, gone} {
		_, err := m.Setup(ctx, id, Spec{Mode: ModeBridge})
		must.NoError(t, err)
		t.Cleanup(func() { _ = m.Teardown(ctx, id) })
	}
	m.CleanLeftovers(ctx, func(id string) bool { return id == keep })
	must.Eq(t, []string{keep}, m.Recorded())
	must.True(t, isNetns(filepath.Join(DefaultNetnsDir, keep)))
	must.False(t, isNetns(filepath.Join(DefaultNetnsDir, gone)))
}

func TestManager_UnknownCNINetwork(t *testing.T) {
	m := New(Config{ConfigDir: t.TempDir(), StateDir: t.TempDir()})
	_, err := m.Setup(context.Background(), structs.GenerateUUID(), Spec{Mode: "cni/nope"})
	must.ErrorContains(t, err, `network mode "cni/nope": no CNI network named "nope" in cni_config_dir`)
	must.SliceEmpty(t, m.Recorded())
}

// Allocs set up at the same time each get their own namespace and address
// (run with -race: libcni's lazily made exec raced here).
func TestManager_ConcurrentSetup(t *testing.T) {
	m := testManager(t)
	ctx := context.Background()
	ids := []string{structs.GenerateUUID(), structs.GenerateUUID(), structs.GenerateUUID()}
	addrs := make([]string, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := m.Setup(ctx, id, Spec{Mode: ModeBridge})
			errs[i] = err
			if err == nil {
				addrs[i] = st.Address
			}
		}()
		t.Cleanup(func() { _ = m.Teardown(ctx, id) })
	}
	wg.Wait()
	for _, err := range errs {
		must.NoError(t, err)
	}
	must.NotEq(t, addrs[0], addrs[1])
	must.NotEq(t, addrs[1], addrs[2])
	must.NotEq(t, addrs[0], addrs[2])
}
