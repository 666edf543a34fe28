package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	dockerclient "github.com/moby/moby/client"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/client"
	"github.com/nomadq/nomadq/client/drivers/docker/dockertest"
	"github.com/nomadq/nomadq/client/drivers/executor"
	"github.com/nomadq/nomadq/client/network"
)

// bridgeClient starts a client-only agent on dataDir that runs raw_exec
// tasks and can set up bridge networks.
func bridgeClient(t *testing.T, srv *Agent, dataDir string) *Agent {
	t.Helper()
	return NewTestAgent(t, func(c *config.Config) {
		c.DevMode = false
		c.Server.Enabled = false
		c.DataDir = dataDir
		c.Client.Servers = []string{srv.RPCAddr()}
		c.Client.Options = map[string]string{"driver.raw_exec.enable": "1"}
		c.Client.CNIPath = strings.Join(client.DefaultCNIPath, ":")
	})
}

// skipWithoutBridge skips a test where this machine cannot set up bridge
// networks, saying why.
func skipWithoutBridge(t *testing.T) {
	t.Helper()
	m := network.New(network.Config{CNIPath: client.DefaultCNIPath, Bridge: network.BridgeConfig{Name: network.DefaultBridgeName, Subnet: network.DefaultBridgeSubnet}})
	if c := m.Fingerprint(); !c.Bridge {
		t.Skipf("bridge networking unavailable: %s (scripts/install-docker-test-deps.sh installs Debian's containernetworking-plugins)", c.BridgeReason)
	}
	for _, bin := range []string{"python3", "iptables-save", "ip"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("bridge networking test needs %s: %v", bin, err)
		}
	}
}

func bridgeJob(id string, count int) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("web", count)
	tg.Networks = []*api.NetworkResource{{
		Mode:         "bridge",
		DynamicPorts: []api.Port{{Label: "http", To: 8080}},
	}}
	task := api.NewTask("server", "raw_exec")
	// The env goes to a file first, so the test can read what the task saw.
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", `env > "$NOMAD_TASK_DIR/env"; cd "$NOMAD_TASK_DIR" && exec python3 -m http.server "$NOMAD_PORT_http"`}}
	task.KillTimeout = new(500 * time.Millisecond)
	task.Require(&api.Resources{CPU: new(50), MemoryMB: new(64)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// hostPort is the host port the scheduler gave an alloc's port.
func hostPort(t *testing.T, a *api.Allocation, label string) int {
	t.Helper()
	for _, p := range a.AllocatedResources.Shared.Ports {
		if p.Label == label {
			return p.Value
		}
	}
	t.Fatalf("alloc %s has no port %q", a.ID, label)
	return 0
}

// answers waits until the host port answers an HTTP GET.
func answers(t *testing.T, port int) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}), wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))
}

func vethNames(t *testing.T) map[string]bool {
	t.Helper()
	out, err := exec.Command("ip", "-o", "link", "show", "type", "veth").CombinedOutput()
	must.NoError(t, err, must.Sprint(string(out)))
	names := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			names[strings.SplitN(strings.TrimSuffix(f[1], ":"), "@", 2)[0]] = true
		}
	}
	return names
}

// A bridge-mode raw_exec job: each alloc gets its own namespace and
// address, its task's port 8080 answers on the host port, a restarted
// client keeps the namespaces of running allocs, and a stop (here while
// the client is down) leaves no namespace, veth or iptables rule behind.
func TestBridgeNetwork_RawExec(t *testing.T) {
	skipWithoutBridge(t)
	vethBefore := vethNames(t)
	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, srv)
	dataDir := t.TempDir()
	cl := bridgeClient(t, srv, dataDir)
	// Whatever happens, nothing of the test's allocs stays on the host.
	t.Cleanup(func() {
		m := network.New(network.Config{CNIPath: client.DefaultCNIPath, StateDir: filepath.Join(dataDir, "client", "network")})
		m.CleanLeftovers(context.Background(), func(string) bool { return false })
	})

	job := bridgeJob("bridge-web", 2)
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	stubs := jobAllocs(t, c, "bridge-web", 2, 60*time.Second, func(a *api.AllocationListStub) bool {
		return a.ClientStatus == api.AllocClientStatusRunning
	})
	var allocs []*api.Allocation
	addrs := map[string]string{}
	for _, s := range stubs {
		a, _, err := c.Allocations().Info(s.ID, nil)
		must.NoError(t, err)
		allocs = append(allocs, a)
		must.NotNil(t, a.NetworkStatus)
		must.Eq(t, "eth0", a.NetworkStatus.InterfaceName)
		must.NotEq(t, "", a.NetworkStatus.Address)
		addrs[a.ID] = a.NetworkStatus.Address
		must.True(t, isFile(filepath.Join(network.DefaultNetnsDir, a.ID)), must.Sprintf("netns of alloc %s", a.ID))
		answers(t, hostPort(t, a, "http"))

		env, err := os.ReadFile(filepath.Join(dataDir, "alloc", a.ID, "server", "local", "env"))
		must.NoError(t, err)
		for _, kv := range []string{
			"NOMAD_PORT_http=8080",
			fmt.Sprintf("NOMAD_HOST_PORT_http=%d", hostPort(t, a, "http")),
			"NOMAD_ALLOC_IP_http=" + a.NetworkStatus.Address,
			"NOMAD_ALLOC_ADDR_http=" + a.NetworkStatus.Address + ":8080",
		} {
			must.StrContains(t, string(env), kv+"\n")
		}
	}
	must.NotEq(t, addrs[allocs[0].ID], addrs[allocs[1].ID], must.Sprint("each alloc has its own namespace and address"))
	// alloc exec runs in the alloc's namespace too.
	devs, _, code, err := wsExec(t, cl.HTTPAddr(), allocs[0].ID, "server", false, "", "/bin/sh", "-c", "cat /proc/net/dev")
	must.NoError(t, err)
	must.Eq(t, 0, code, must.Sprint(devs))
	must.StrContains(t, devs, "eth0:")

	// A client restarted while the allocs run keeps their namespaces: the
	// tasks answer throughout, at the same addresses.
	must.NoError(t, cl.Shutdown())
	cl = bridgeClient(t, srv, dataDir)
	for _, a := range allocs {
		answers(t, hostPort(t, a, "http"))
		must.True(t, isFile(filepath.Join(network.DefaultNetnsDir, a.ID)))
	}
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		for _, a := range allocs {
			got, _, err := c.Allocations().Info(a.ID, nil)
			if err != nil {
				return err
			}
			if got.NetworkStatus == nil || got.NetworkStatus.Address != addrs[a.ID] {
				return fmt.Errorf("alloc %s network status %+v, want address %s", a.ID, got.NetworkStatus, addrs[a.ID])
			}
		}
		return nil
	}), wait.Timeout(20*time.Second), wait.Gap(100*time.Millisecond)))

	// The job stops while the client is down; the next client kills the
	// tasks and tears their networks down.
	must.NoError(t, cl.Shutdown())
	_, _, err = c.Jobs().Deregister("bridge-web", false, nil)
	must.NoError(t, err)
	bridgeClient(t, srv, dataDir)
	jobAllocs(t, c, "bridge-web", 2, 60*time.Second, func(a *api.AllocationListStub) bool {
		return a.ClientStatus == api.AllocClientStatusComplete
	})
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		for _, a := range allocs {
			if _, err := os.Stat(filepath.Join(network.DefaultNetnsDir, a.ID)); err == nil {
				return fmt.Errorf("netns of alloc %s is left", a.ID)
			}
		}
		return nil
	}), wait.Timeout(20*time.Second), wait.Gap(100*time.Millisecond)))
	for name := range vethNames(t) {
		must.True(t, vethBefore[name], must.Sprintf("veth %s is left", name))
	}
	out, err := exec.Command("iptables-save").CombinedOutput()
	must.NoError(t, err)
	for _, a := range allocs {
		must.False(t, strings.Contains(string(out), addrs[a.ID]+"/"), must.Sprintf("an iptables rule of %s is left", addrs[a.ID]))
		must.False(t, strings.Contains(string(out), a.ID), must.Sprintf("an iptables rule of alloc %s is left", a.ID))
	}
	nsList, err := exec.Command("ip", "netns", "list").CombinedOutput()
	must.NoError(t, err)
	for _, a := range allocs {
		must.False(t, strings.Contains(string(nsList), a.ID), must.Sprintf("ip netns list shows alloc %s", a.ID))
	}
}

func isFile(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// The group's hostname (interpolated) and dns block are what the tasks of
// either process driver see, and mode "none" leaves them loopback only.
func TestBridgeNetwork_HostnameDNSAndNone(t *testing.T) {
	skipWithoutBridge(t)
	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, srv)
	dataDir := t.TempDir()
	bridgeClient(t, srv, dataDir)
	t.Cleanup(func() {
		m := network.New(network.Config{CNIPath: client.DefaultCNIPath, StateDir: filepath.Join(dataDir, "client", "network")})
		m.CleanLeftovers(context.Background(), func(string) bool { return false })
	})
	drivers := []string{"raw_exec"}
	if err := executor.CgroupsUsable(); err == nil {
		drivers = append(drivers, "exec")
	} else {
		t.Logf("exec driver not checked: %v", err)
	}
	for _, driver := range drivers {
		t.Run(driver, func(t *testing.T) {
			for _, tc := range []struct {
				name string
				nw   *api.NetworkResource
				want []string
				not  []string
			}{
				{
					name: "bridge",
					nw: &api.NetworkResource{
						Mode:     "bridge",
						Hostname: "web-${NOMAD_ALLOC_INDEX}",
						DNS:      &api.DNSConfig{Servers: []string{"10.0.0.53"}, Searches: []string{"svc.local"}, Options: []string{"ndots:2"}},
					},
					want: []string{"hostname=web-0\n", "nameserver 10.0.0.53\n", "search svc.local\n", "options ndots:2\n", " web-0\n", "eth0:"},
				},
				{name: "none", nw: &api.NetworkResource{Mode: "none"}, want: []string{"lo:"}, not: []string{"eth0:"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					id := "net-" + strings.ReplaceAll(driver, "_", "-") + "-" + tc.name
					task := api.NewTask("main", driver)
					task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", `echo "hostname=$(cat /proc/sys/kernel/hostname)"; cat /etc/resolv.conf /etc/hosts /proc/net/dev`}}
					task.Require(&api.Resources{CPU: new(50), MemoryMB: new(64)})
					job := api.NewBatchJob(id, id, "global", 50)
					job.Datacenters = []string{"*"}
					tg := api.NewTaskGroup("g", 1)
					tg.Networks = []*api.NetworkResource{tc.nw}
					tg.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
					tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
					tg.AddTask(task)
					job.AddTaskGroup(tg)
					_, _, err := c.Jobs().Register(job, nil)
					must.NoError(t, err)
					a := onlyAlloc(t, c, id, func(s *api.AllocationListStub) bool {
						return s.ClientStatus == api.AllocClientStatusComplete || s.ClientStatus == api.AllocClientStatusFailed
					})
					must.Eq(t, api.AllocClientStatusComplete, a.ClientStatus, must.Sprintf("%+v", a.TaskStates["main"]))
					b, err := os.ReadFile(filepath.Join(dataDir, "alloc", a.ID, "alloc", "logs", "main.stdout.0"))
					must.NoError(t, err)
					out := string(b)
					for _, w := range tc.want {
						must.StrContains(t, out, w)
					}
					for _, n := range tc.not {
						must.False(t, strings.Contains(out, n), must.Sprintf("%q in %s", n, out))
					}
					must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return !isFile(filepath.Join(network.DefaultNetnsDir, a.ID)) }),
						wait.Timeout(20*time.Second), wait.Gap(100*time.Millisecond)))
				})
			}
		})
	}
}

// cni/<name> runs the operator's network list from cni_config_dir; a name
// no node has keeps the group unplaced ("missing network"), and a list
// whose plugins fail fails the alloc and leaves nothing behind.
func TestBridgeNetwork_CNIMode(t *testing.T) {
	skipWithoutBridge(t)
	cniDir := t.TempDir()
	must.NoError(t, os.WriteFile(filepath.Join(cniDir, "10-testnet.conflist"), []byte(`{
  "cniVersion": "0.4.0",
  "name": "testnet",
  "plugins": [
    {"type": "loopback"},
    {"type": "bridge", "bridge": "nqtest0", "isGateway": true, "ipMasq": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.199.7.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}, "snat": true}
  ]
}`), 0o644))
	must.NoError(t, os.WriteFile(filepath.Join(cniDir, "20-broken.conflist"), []byte(`{
  "cniVersion": "0.4.0",
  "name": "broken",
  "plugins": [{"type": "loopback"}, {"type": "no-such-plugin"}]
}`), 0o644))
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", "nqtest0").Run()
		_ = os.RemoveAll("/var/lib/cni/networks/testnet")
	})

	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, srv)
	dataDir := t.TempDir()
	NewTestAgent(t, func(c *config.Config) {
		c.DevMode = false
		c.Server.Enabled = false
		c.DataDir = dataDir
		c.Client.Servers = []string{srv.RPCAddr()}
		c.Client.Options = map[string]string{"driver.raw_exec.enable": "1"}
		c.Client.CNIConfigDir = cniDir
	})
	t.Cleanup(func() {
		m := network.New(network.Config{CNIPath: client.DefaultCNIPath, ConfigDir: cniDir, StateDir: filepath.Join(dataDir, "client", "network")})
		m.CleanLeftovers(context.Background(), func(string) bool { return false })
	})

	t.Run("operator network", func(t *testing.T) {
		job := bridgeJob("cni-web", 1)
		job.TaskGroups[0].Networks[0].Mode = "cni/testnet"
		_, _, err := c.Jobs().Register(job, nil)
		must.NoError(t, err)
		a := onlyAlloc(t, c, "cni-web", func(s *api.AllocationListStub) bool { return s.ClientStatus == api.AllocClientStatusRunning })
		must.StrHasPrefix(t, "10.199.7.", a.NetworkStatus.Address)
		answers(t, hostPort(t, a, "http"))
		_, _, err = c.Jobs().Deregister("cni-web", false, nil)
		must.NoError(t, err)
		must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return !isFile(filepath.Join(network.DefaultNetnsDir, a.ID)) }),
			wait.Timeout(20*time.Second), wait.Gap(100*time.Millisecond)))
	})

	t.Run("unknown network", func(t *testing.T) {
		job := bridgeJob("cni-missing", 1)
		job.TaskGroups[0].Networks[0].Mode = "cni/missing"
		resp, _, err := c.Jobs().Register(job, nil)
		must.NoError(t, err)
		must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
			ev, _, err := c.Evaluations().Info(resp.EvalID, nil)
			if err != nil {
				return err
			}
			m := ev.FailedTGAllocs["web"]
			if m == nil || m.ConstraintFiltered["missing network"] != 1 {
				return fmt.Errorf("eval %s: failed allocs %+v", ev.Status, m)
			}
			return nil
		}), wait.Timeout(20*time.Second), wait.Gap(100*time.Millisecond)))
	})

	t.Run("plugin fails", func(t *testing.T) {
		job := bridgeJob("cni-broken", 1)
		job.TaskGroups[0].Networks[0].Mode = "cni/broken"
		job.TaskGroups[0].ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
		_, _, err := c.Jobs().Register(job, nil)
		must.NoError(t, err)
		a := onlyAlloc(t, c, "cni-broken", func(s *api.AllocationListStub) bool { return s.ClientStatus == api.AllocClientStatusFailed })
		var msgs []string
		for _, e := range a.TaskStates["server"].Events {
			msgs = append(msgs, e.SetupError)
		}
		must.StrContains(t, strings.Join(msgs, "\n"), `no-such-plugin`)
		must.False(t, isFile(filepath.Join(network.DefaultNetnsDir, a.ID)))
		entries, _ := os.ReadDir(filepath.Join(dataDir, "client", "network"))
		must.SliceEmpty(t, entries)
	})
}

// A docker task of a bridge group joins the alloc's namespace through the
// pause container made from infra_image: it answers on the group's host
// port, sees the group's hostname and dns, and the pause container goes
// with the alloc's network.
func TestBridgeNetwork_Docker(t *testing.T) {
	skipWithoutBridge(t)
	e := dockertest.StartT(t)
	must.NoError(t, e.ImportPauseImage())
	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, srv)
	dataDir := t.TempDir()
	NewTestAgent(t, func(c *config.Config) {
		c.DevMode = false
		c.Server.Enabled = false
		c.DataDir = dataDir
		c.Client.Servers = []string{srv.RPCAddr()}
		c.Plugins = append(c.Plugins, &config.Plugin{Name: "docker", Config: map[string]any{"endpoint": e.Host, "infra_image": dockertest.PauseImage}})
	})
	t.Cleanup(func() {
		m := network.New(network.Config{CNIPath: client.DefaultCNIPath, StateDir: filepath.Join(dataDir, "client", "network")})
		m.CleanLeftovers(context.Background(), func(string) bool { return false })
	})

	job := api.NewServiceJob("dk-bridge", "dk-bridge", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("web", 1)
	tg.Networks = []*api.NetworkResource{{
		Mode:         "bridge",
		Hostname:     "dk-${NOMAD_ALLOC_INDEX}",
		DNS:          &api.DNSConfig{Servers: []string{"10.0.0.53"}},
		DynamicPorts: []api.Port{{Label: "http", To: 8080}},
	}}
	task := api.NewTask("web", "docker")
	task.Config = map[string]any{
		"image":   dockertest.Image,
		"command": "/bin/sh",
		"args": []string{"-c", `echo "hello-$NOMAD_ALLOC_ID" > /local/index.html; hostname > /local/hostname; cat /etc/resolv.conf > /local/resolv;
exec /bin/busybox httpd -f -p "$NOMAD_PORT_http" -h /local`},
		"ports": []string{"http"},
	}
	task.KillTimeout = new(500 * time.Millisecond)
	task.Require(&api.Resources{CPU: new(50), MemoryMB: new(32)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	a := onlyAlloc(t, c, "dk-bridge", func(s *api.AllocationListStub) bool { return s.ClientStatus == api.AllocClientStatusRunning })
	port := hostPort(t, a, "http")
	answers(t, port)
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/index.html", port))
	must.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	must.Eq(t, "hello-"+a.ID+"\n", string(body))
	local := filepath.Join(dataDir, "alloc", a.ID, "web", "local")
	hostname, err := os.ReadFile(filepath.Join(local, "hostname"))
	must.NoError(t, err)
	must.Eq(t, "dk-0\n", string(hostname))
	resolv, err := os.ReadFile(filepath.Join(local, "resolv"))
	must.NoError(t, err)
	must.StrContains(t, string(resolv), "nameserver 10.0.0.53")
	pause, err := e.Client.ContainerInspect(context.Background(), "nomad_init_"+a.ID, dockerclient.ContainerInspectOptions{})
	must.NoError(t, err)
	must.True(t, pause.Container.State.Running)

	_, _, err = c.Jobs().Deregister("dk-bridge", false, nil)
	must.NoError(t, err)
	onlyAlloc(t, c, "dk-bridge", func(s *api.AllocationListStub) bool { return s.ClientStatus == api.AllocClientStatusComplete })
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		if isFile(filepath.Join(network.DefaultNetnsDir, a.ID)) {
			return errors.New("the alloc's netns is left")
		}
		if _, err := e.Client.ContainerInspect(context.Background(), "nomad_init_"+a.ID, dockerclient.ContainerInspectOptions{}); err == nil {
			return errors.New("the pause container is left")
		}
		return nil
	}), wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))
}

// alloc exec into an exec task of a bridge group runs in the alloc's
// network and sees its hostname.
func TestBridgeNetwork_ExecAllocExec(t *testing.T) {
	skipWithoutBridge(t)
	if err := executor.CgroupsUsable(); err != nil {
		t.Skipf("exec driver tests need root and cgroups: %v", err)
	}
	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, srv)
	dataDir := t.TempDir()
	cl := bridgeClient(t, srv, dataDir)
	t.Cleanup(func() {
		m := network.New(network.Config{CNIPath: client.DefaultCNIPath, StateDir: filepath.Join(dataDir, "client", "network")})
		m.CleanLeftovers(context.Background(), func(string) bool { return false })
	})
	job := execJob("bridge-exec", execTask("main", "exec sleep 300", 32), 0)
	job.TaskGroups[0].Networks = []*api.NetworkResource{{Mode: "bridge", Hostname: "box"}}
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	a := onlyAlloc(t, c, "bridge-exec", isRunning)
	out, _, code, err := wsExec(t, cl.HTTPAddr(), a.ID, "main", false, "", "/bin/sh", "-c", "cat /proc/net/dev; cat /proc/sys/kernel/hostname")
	must.NoError(t, err)
	must.Eq(t, 0, code, must.Sprint(out))
	must.StrContains(t, out, "eth0:")
	must.StrContains(t, out, "box\n")
}

// An unknown network mode is refused at registration, naming the value;
// the client's bridge and CNI keys are read from the config file, and a
// subnet that is not a CIDR stops the agent naming the key.
func TestBridgeNetwork_RefusedAndConfig(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	job := bridgeJob("bad-mode", 1)
	job.TaskGroups[0].Networks[0].Mode = "bridgee"
	_, _, err := c.Jobs().Register(job, nil)
	must.ErrorContains(t, err, `network mode "bridgee" is not allowed: must be host, bridge, none or cni/<name>`)
	job.TaskGroups[0].Networks[0].Mode = "cni/"
	_, _, err = c.Jobs().Register(job, nil)
	must.ErrorContains(t, err, `network mode "cni/" is not allowed`)

	file := `client {
  cni_path                    = "/opt/cni/bin:/usr/lib/cni"
  cni_config_dir              = "/etc/cni/net.d"
  bridge_network_name         = "nq0"
  bridge_network_subnet       = "10.88.0.0/16"
  bridge_network_hairpin_mode = true
}
`
	cfg := config.Default()
	must.NoError(t, config.Parse(cfg, "client.hcl", []byte(file), func(w string) { t.Errorf("warning: %s", w) }))
	must.Eq(t, "/opt/cni/bin:/usr/lib/cni", cfg.Client.CNIPath)
	must.Eq(t, "/etc/cni/net.d", cfg.Client.CNIConfigDir)
	must.Eq(t, "nq0", cfg.Client.BridgeNetworkName)
	must.Eq(t, "10.88.0.0/16", cfg.Client.BridgeNetworkSubnet)
	must.True(t, cfg.Client.BridgeNetworkHairpinMode)
	must.Eq(t, []string{"/opt/cni/bin", "/usr/lib/cni"}, splitCNIPath(cfg.Client.CNIPath))

	_, err = StartLocal(func(c *config.Config) { c.Client.BridgeNetworkSubnet = "10.88.0.0" }, testLogOutput(), 60*time.Second)
	must.ErrorContains(t, err, `bridge_network_subnet "10.88.0.0" is not allowed`)
}
