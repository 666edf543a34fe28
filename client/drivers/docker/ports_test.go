package docker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/docker/dockertest"
)

// freePort is a TCP port nothing listens on at the moment.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// The most common Nomad job shape: a host-network group with
// port "http" { to = 80 } and a docker task with ports = ["http"]: docker's
// bridge publishes the host port to port 80 in the container. The engine
// of this test has its own bridge and iptables; when it stops, neither
// its bridge nor a rule of its is left.
func TestDriver_PortsOnDockerBridge(t *testing.T) {
	before := dockertest.FirewallLeftovers("")
	e := dockertest.StartTWith(t, dockertest.Options{Bridge: true})
	bridge := e.BridgeName()
	d := newDriver(t, e, nil)

	port := freePort(t)
	tc := newTask(t, map[string]any{
		"image": dockertest.Image, "command": "httpd", "args": []any{"-f", "-p", "80", "-h", "/local"},
		"network_mode": "", "ports": []any{"http"},
		"extra_hosts": []any{"db.internal:10.1.2.3"}, "dns_servers": []any{"10.9.9.9"},
	})
	tc.Env["NOMAD_HOST_IP_http"] = "127.0.0.1"
	tc.Env["NOMAD_HOST_PORT_http"] = strconv.Itoa(port)
	tc.Env["NOMAD_PORT_http"] = "80"
	must.NoError(t, os.WriteFile(filepath.Join(tc.TaskDir, "local", "index.html"), []byte("hello from "+tc.AllocID+"\n"), 0o644))
	_, err := d.StartTask(tc)
	must.NoError(t, err)

	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/index.html"
	var body string
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		res, err := http.Get(url)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		body = string(b)
		return err
	}), wait.Timeout(30*time.Second), wait.Gap(200*time.Millisecond)))
	must.Eq(t, "hello from "+tc.AllocID+"\n", body)

	insp, err := e.Client.ContainerInspect(context.Background(), mustGet(t, d, tc.ID).containerID, client.ContainerInspectOptions{})
	must.NoError(t, err)
	must.Eq(t, "default", string(insp.Container.HostConfig.NetworkMode))

	// Docker's bridge honours the task's hosts and dns.
	var out bytes.Buffer
	code, err := d.ExecTask(context.Background(), tc, &drivers.ExecOptions{
		Command: []string{"cat", "/etc/hosts", "/etc/resolv.conf"}, Stdout: &out, Stderr: io.Discard,
	})
	must.NoError(t, err)
	must.Eq(t, 0, code)
	must.StrContains(t, out.String(), "10.1.2.3\tdb.internal")
	must.StrContains(t, out.String(), "nameserver 10.9.9.9")

	must.NoError(t, d.DestroyTask(tc.ID))
	e.Stop()
	_, err = net.InterfaceByName(bridge)
	must.Error(t, err, must.Sprintf("bridge %s is left after the engine stopped", bridge))
	if len(before) == 0 {
		left := dockertest.FirewallLeftovers(bridge)
		must.SliceEmpty(t, left, must.Sprintf("iptables rules left:\n%s", strings.Join(left, "\n")))
	}
}

// network_mode = "container:<name>" joins another container's network
// namespace, by the name Nomad users write: "<task>-${NOMAD_ALLOC_ID}".
func TestDriver_NetworkModeContainer(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, nil)
	first := newTask(t, map[string]any{"image": dockertest.Image, "command": "sleep", "args": []any{"600"}})
	_, err := d.StartTask(first)
	must.NoError(t, err)
	t.Cleanup(func() { _ = d.DestroyTask(first.ID) })

	second := newTask(t, map[string]any{
		"image": dockertest.Image, "command": "sleep", "args": []any{"600"},
		"network_mode": "container:web-" + first.AllocID,
	})
	_, err = d.StartTask(second)
	must.NoError(t, err)
	t.Cleanup(func() { _ = d.DestroyTask(second.ID) })

	netns := func(tc *drivers.TaskConfig) string {
		insp, err := e.Client.ContainerInspect(context.Background(), mustGet(t, d, tc.ID).containerID, client.ContainerInspectOptions{})
		must.NoError(t, err)
		ns, err := os.Readlink("/proc/" + strconv.Itoa(insp.Container.State.Pid) + "/ns/net")
		must.NoError(t, err)
		return ns
	}
	must.Eq(t, netns(first), netns(second))

	// A container that is not there fails the start with the engine's words.
	missing := newTask(t, map[string]any{"image": dockertest.Image, "command": "true", "network_mode": "container:nope-" + first.AllocID})
	_, err = d.StartTask(missing)
	must.ErrorContains(t, err, "nope-"+first.AllocID)
}

// An engine without a bridge (dockerd --bridge=none, as the package's test
// engine runs) cannot publish ports: the task fails to start, saying so,
// rather than running with none of its ports reachable.
func TestDriver_PortsNeedEngineBridge(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, nil)
	tc := newTask(t, map[string]any{"image": dockertest.Image, "command": "true", "network_mode": "", "ports": []any{"http"}})
	tc.Env["NOMAD_HOST_PORT_http"] = strconv.Itoa(freePort(t))
	tc.Env["NOMAD_PORT_http"] = "80"
	_, err := d.StartTask(tc)
	must.ErrorContains(t, err, `config key "ports": the docker engine has no "bridge" network`)
	var ve *drivers.ValidationError
	must.True(t, errors.As(err, &ve), must.Sprint("no restart can give the engine a bridge"))
	must.Eq(t, 0, containersOf(t, e, tc.AllocID, true))
}
