package docker

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// One engine for the package: starting dockerd costs about a second.
func TestMain(m *testing.M) { dockertest.Main(m) }

// newDriver returns a driver on the test engine with the plugin config
// m (nil: defaults).
func newDriver(t *testing.T, e *dockertest.Engine, m map[string]any) *Driver {
	t.Helper()
	if m == nil {
		m = map[string]any{}
	}
	m["endpoint"] = e.Host
	pc, err := ParsePluginConfig(m)
	must.NoError(t, err)
	return New(Options{Config: pc, NodeID: "node-1", NodeName: "node-one"})
}

var taskSeq int

// newTask lays out an alloc dir as the client does and returns a task
// config for it.
func newTask(t *testing.T, cfg map[string]any) *drivers.TaskConfig {
	t.Helper()
	taskSeq++
	allocDir := t.TempDir()
	// Unique per call: tasks of one test may start within a microsecond.
	allocID := strings.ReplaceAll(t.Name(), "/", "-") + "-" + time.Now().Format("150405.000000") + "-" + strconv.Itoa(taskSeq)
	allocID = strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(allocID))
	for _, d := range []string{"alloc/logs", "alloc/data", "web/local", "web/secrets"} {
		must.NoError(t, os.MkdirAll(filepath.Join(allocDir, d), 0o755))
	}
	if _, ok := cfg["network_mode"]; !ok {
		cfg["network_mode"] = "none"
	}
	return &drivers.TaskConfig{
		ID:        allocID + "/web",
		AllocID:   allocID,
		Name:      "web",
		JobName:   "example",
		TaskGroup: "group",
		Config:    cfg,
		Env:       map[string]string{"NOMAD_ALLOC_ID": allocID, "NOMAD_JOB_ID": "example", "NOMAD_NAMESPACE": "default"},
		TaskDir:   filepath.Join(allocDir, "web"),
		LogDir:    filepath.Join(allocDir, "alloc/logs"),
		MaxFiles:  3, MaxFileSizeMB: 1,
		Resources: &drivers.Resources{CPUShares: 100, MemoryMB: 64},
	}
}

func waitExit(t *testing.T, d *Driver, id string, within time.Duration) *drivers.ExitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	ch, err := d.WaitTask(ctx, id)
	must.NoError(t, err)
	res, ok := <-ch
	must.True(t, ok, must.Sprint("task did not exit in time"))
	return res
}

func readLog(t *testing.T, tc *drivers.TaskConfig, prefix string) string {
	t.Helper()
	b, err := os.ReadFile(prefix + ".0")
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	must.NoError(t, err)
	return string(b)
}

// containersOf lists the engine's containers (running or not) labelled
// with the alloc ID.
func containersOf(t *testing.T, e *dockertest.Engine, allocID string, all bool) int {
	t.Helper()
	res, err := e.Client.ContainerList(context.Background(), client.ContainerListOptions{
		All: all, Filters: client.Filters{}.Add("label", LabelAllocID+"="+allocID),
	})
	must.NoError(t, err)
	return len(res.Items)
}

func TestDriver_Fingerprint(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, map[string]any{"allow_privileged": true, "volumes": map[string]any{"enabled": true}})
	fp := d.Fingerprint()
	must.True(t, fp.Detected)
	must.True(t, fp.Healthy, must.Sprint(fp.HealthDescription))
	must.Eq(t, "true", fp.Attributes["driver.docker"])
	must.NotEq(t, "", fp.Attributes["driver.docker.version"])
	must.Eq(t, "true", fp.Attributes["driver.docker.privileged.enabled"])
	must.Eq(t, "true", fp.Attributes["driver.docker.volumes.enabled"])
	must.Eq(t, "linux", fp.Attributes["driver.docker.os_type"])

	gone := New(Options{Config: PluginConfig{Endpoint: "unix://" + filepath.Join(t.TempDir(), "none.sock")}})
	fp = gone.Fingerprint()
	must.False(t, fp.Detected)
	must.False(t, fp.Healthy)
	must.Eq(t, "Failed to connect to docker daemon", fp.HealthDescription)
}

// TestDriver_HealthFollowsEngine checks a driver that saw its engine turns
// unhealthy (still detected) when the engine stops answering and healthy
// when it answers again.
func TestDriver_HealthFollowsEngine(t *testing.T) {
	e := dockertest.Require(t)
	p := e.Proxy(t)
	d := New(Options{Config: PluginConfig{Endpoint: p.Host}})
	must.True(t, d.Fingerprint().Healthy)
	p.Close()
	fp := d.Fingerprint()
	must.True(t, fp.Detected)
	must.False(t, fp.Healthy)
	must.NoError(t, p.Open())
	must.True(t, d.Fingerprint().Healthy)
}

func TestDriver_HelloLogsAndLabels(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, map[string]any{"extra_labels": []any{"job_*", "task_name", "node_id"}})
	tc := newTask(t, map[string]any{
		"image":   dockertest.Image,
		"command": "/bin/sh",
		"args":    []any{"-c", `echo hello-$NOMAD_ALLOC_ID; echo dir=$NOMAD_ALLOC_DIR; echo oops >&2; echo x > $NOMAD_ALLOC_DIR/data/seen; echo s > /secrets/s; echo l > /local/l`},
		"labels":  map[string]any{"team": "queue"},
	})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	res := waitExit(t, d, tc.ID, time.Minute)
	must.True(t, res.Successful(), must.Sprintf("%+v", res))
	out := readLog(t, tc, tc.StdoutPrefix())
	must.StrContains(t, out, "hello-"+tc.AllocID+"\n")
	must.StrContains(t, out, "dir=/alloc\n")
	must.Eq(t, "oops\n", readLog(t, tc, tc.StderrPrefix()))
	for _, f := range []string{"alloc/data/seen", "web/secrets/s", "web/local/l"} {
		_, err := os.Stat(filepath.Join(filepath.Dir(tc.TaskDir), f))
		must.NoError(t, err, must.Sprintf("%s written in the container", f))
	}

	ins, err := e.Client.ContainerInspect(context.Background(), "web-"+tc.AllocID, client.ContainerInspectOptions{})
	must.NoError(t, err)
	l := ins.Container.Config.Labels
	must.Eq(t, tc.AllocID, l[LabelAllocID])
	must.Eq(t, "example", l[LabelJobName])
	must.Eq(t, "example", l[LabelJobID])
	must.Eq(t, "web", l[LabelTaskName])
	must.Eq(t, "node-1", l[LabelNodeID])
	must.Eq(t, "queue", l["team"])
	_, hasNS := l[LabelNamespace]
	must.False(t, hasNS, must.Sprint("namespace is not in extra_labels"))
	must.Eq(t, int64(64<<20), ins.Container.HostConfig.Memory)
	must.Eq(t, "json-file", ins.Container.HostConfig.LogConfig.Type)
	must.Eq(t, map[string]string{"max-file": "2", "max-size": "2m"}, ins.Container.HostConfig.LogConfig.Config)

	must.NoError(t, d.DestroyTask(tc.ID))
	must.Eq(t, 0, containersOf(t, e, tc.AllocID, true))
}

func TestDriver_ExitCode(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, map[string]any{"gc": map[string]any{"container": false}})
	tc := newTask(t, map[string]any{"image": dockertest.Image, "command": "sh", "args": []any{"-c", "exit 3"}})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	res := waitExit(t, d, tc.ID, time.Minute)
	must.Eq(t, 3, res.ExitCode)
	must.False(t, res.Successful())
	must.NoError(t, d.DestroyTask(tc.ID))
	// gc.container = false keeps it.
	must.Eq(t, 1, containersOf(t, e, tc.AllocID, true))
	_, err = e.Client.ContainerRemove(context.Background(), "web-"+tc.AllocID, client.ContainerRemoveOptions{Force: true})
	must.NoError(t, err)
}

func TestDriver_StopAndDestroy(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, nil)
	// sh ignores SIGINT as pid 1; the kill after the timeout ends it.
	tc := newTask(t, map[string]any{"image": dockertest.Image, "command": "sleep", "args": []any{"600"}})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	must.Eq(t, 1, containersOf(t, e, tc.AllocID, false))
	must.NoError(t, d.StopTask(tc.ID, 500*time.Millisecond, "SIGTERM"))
	res := waitExit(t, d, tc.ID, time.Minute)
	must.False(t, res.Successful())
	must.NoError(t, d.DestroyTask(tc.ID))
	must.Eq(t, 0, containersOf(t, e, tc.AllocID, true))
	_, err = d.get(tc.ID)
	must.ErrorIs(t, err, drivers.ErrTaskNotFound)
}

func TestDriver_OOMKilled(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, nil)
	tc := newTask(t, map[string]any{
		"image": dockertest.Image, "command": "sh",
		// The shell's variable grows past the 32 MB limit.
		"args": []any{"-c", `x=$(head -c 200000000 /dev/zero | tr '\0' a); echo ${#x}`},
	})
	tc.Resources = &drivers.Resources{MemoryMB: 32}
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	res := waitExit(t, d, tc.ID, 2*time.Minute)
	must.True(t, res.OOMKilled, must.Sprintf("%+v", res))
	must.EqError(t, res.Err, drivers.OOMKilledMessage)
	must.NoError(t, d.DestroyTask(tc.ID))
}

// TestDriver_Recover checks a second driver (a restarted client) finds
// the running container by its handle, keeps its logs without repeating
// them, and reports the exit of a container that ended while no driver
// watched it with its real code.
func TestDriver_Recover(t *testing.T) {
	e := dockertest.Require(t)
	d1 := newDriver(t, e, nil)
	tc := newTask(t, map[string]any{
		"image": dockertest.Image, "command": "sh",
		"args": []any{"-c", `echo before; while [ ! -e /alloc/data/go ]; do sleep 0.1; done; echo after; exit 7`},
	})
	h, err := d1.StartTask(tc)
	must.NoError(t, err)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return readLog(t, tc, tc.StdoutPrefix()) == "before\n"
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)))
	// The old client goes away without destroying anything.
	mustGet(t, d1, tc.ID).stop()

	d2 := newDriver(t, e, nil)
	must.NoError(t, d2.RecoverTask(h))
	must.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(tc.LogDir), "data/go"), nil, 0o644))
	res := waitExit(t, d2, tc.ID, time.Minute)
	must.Eq(t, 7, res.ExitCode)
	must.Eq(t, "before\nafter\n", readLog(t, tc, tc.StdoutPrefix()))
	must.Eq(t, 1, containersOf(t, e, tc.AllocID, true), must.Sprint("no second container"))

	// A container that died while no driver ran.
	d3 := newDriver(t, e, nil)
	must.NoError(t, d3.RecoverTask(h))
	must.Eq(t, 7, waitExit(t, d3, tc.ID, time.Minute).ExitCode)
	must.NoError(t, d3.DestroyTask(tc.ID))
	must.Error(t, newDriver(t, e, nil).RecoverTask(h), must.Sprint("the container is gone"))
}

func TestDriver_ExecAndStats(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, nil)
	tc := newTask(t, map[string]any{"image": dockertest.Image, "command": "sleep", "args": []any{"600"}})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	t.Cleanup(func() { _ = d.DestroyTask(tc.ID) })

	var out, errOut bytes.Buffer
	code, err := d.ExecTask(context.Background(), tc, &drivers.ExecOptions{
		Command: []string{"sh", "-c", "cat; echo id=$NOMAD_ALLOC_ID; echo e >&2; exit 4"},
		Stdin:   strings.NewReader("in\n"), Stdout: &out, Stderr: &errOut,
	})
	must.NoError(t, err)
	must.Eq(t, 4, code)
	must.Eq(t, "in\nid="+tc.AllocID+"\n", out.String())
	must.Eq(t, "e\n", errOut.String())

	u, err := d.TaskStats(tc.ID)
	must.NoError(t, err)
	must.Positive(t, u.Usage)
	must.SliceContains(t, u.Measured, "RSS")
}

func TestDriver_SignalTask(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, nil)
	tc := newTask(t, map[string]any{"image": dockertest.Image, "command": "sh",
		"args": []any{"-c", `trap 'echo got-usr1; exit 0' USR1; echo ready; while true; do sleep 0.1; done`}})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	t.Cleanup(func() { _ = d.DestroyTask(tc.ID) })
	// The trap is set once the task says ready.
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return strings.Contains(readLog(t, tc, tc.StdoutPrefix()), "ready\n")
	}), wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)))
	must.NoError(t, d.SignalTask(tc.ID, "SIGUSR1"))
	must.True(t, waitExit(t, d, tc.ID, time.Minute).Successful())
	must.StrContains(t, readLog(t, tc, tc.StdoutPrefix()), "got-usr1")
}

func mustGet(t *testing.T, d *Driver, id string) *task {
	tk, err := d.get(id)
	must.NoError(t, err)
	return tk
}

func TestDriver_StartFailsForMissingImage(t *testing.T) {
	e := dockertest.Require(t)
	// A registry on a closed loopback port: the pull fails fast.
	d := newDriver(t, e, nil)
	tc := newTask(t, map[string]any{"image": "127.0.0.1:1/nothing/here:1", "image_pull_timeout": "20s"})
	_, err := d.StartTask(tc)
	must.ErrorContains(t, err, `pull image "127.0.0.1:1/nothing/here:1"`)
	// A registry that does not answer may answer later: the restart
	// policy decides, as in Nomad.
	var rec recoverableError
	must.True(t, errors.As(err, &rec), must.Sprintf("%v is not recoverable", err))
	must.Eq(t, 0, containersOf(t, e, tc.AllocID, true))
}

// The runtime keys reach the container: DNS, hosts, limits, sysctls,
// init, terminal.
func TestDriver_RuntimeKeys(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, nil)
	tc := newTask(t, map[string]any{
		"image": dockertest.Image, "command": "sh",
		"args": []any{"-c", `grep db.internal /etc/hosts; grep -E 'nameserver|search|options' /etc/resolv.conf; ` +
			`echo nofile=$(ulimit -n); cat /proc/sys/net/ipv4/ip_forward; if [ -t 1 ]; then echo tty; fi`},
		"extra_hosts":        []any{"db.internal:10.1.2.3"},
		"dns_servers":        []any{"10.0.0.53"},
		"dns_search_domains": []any{"corp.example"},
		"dns_options":        []any{"ndots:2"},
		"ulimit":             []any{map[string]any{"nofile": "512:1024"}},
		"sysctl":             map[string]any{"net.ipv4.ip_forward": "1"},
		"pids_limit":         64,
		"shm_size":           8 << 20,
		"init":               true,
		"tty":                true,
		"oom_score_adj":      500,
	})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	res := waitExit(t, d, tc.ID, time.Minute)
	out := strings.ReplaceAll(readLog(t, tc, tc.StdoutPrefix()), "\r\n", "\n")
	must.True(t, res.Successful(), must.Sprintf("%+v: %s", res, out))
	for _, want := range []string{"10.1.2.3\tdb.internal\n", "nameserver 10.0.0.53\n", "search corp.example\n", "options ndots:2\n", "nofile=512\n", "1\n", "tty\n"} {
		must.StrContains(t, out, want)
	}
	ins, err := e.Client.ContainerInspect(context.Background(), "web-"+tc.AllocID, client.ContainerInspectOptions{})
	must.NoError(t, err)
	h := ins.Container.HostConfig
	must.Eq(t, int64(64), *h.PidsLimit)
	must.Eq(t, int64(8<<20), h.ShmSize)
	must.True(t, *h.Init)
	must.Eq(t, 500, h.OomScoreAdj)
	must.NoError(t, d.DestroyTask(tc.ID))
}

// Volumes and mounts: a relative volume lands in the task dir, a tmpfs
// is a tmpfs, the logs are read-only, and a host path outside the alloc
// dir needs volumes enabled.
func TestDriver_VolumesAndMounts(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, nil)
	tc := newTask(t, map[string]any{
		"image": dockertest.Image, "command": "sh",
		"args": []any{"-c", `echo v > /data/f; echo m > /bound/g; grep ' /scratch ' /proc/mounts | cut -d' ' -f3; ` +
			`if echo x > /alloc/logs/x 2>/dev/null; then echo logs-writable; fi; ls /ro; if touch /ro/y 2>/dev/null; then echo ro-writable; fi`},
		"volumes": []any{"data:/data", "local:/ro:ro"},
		"mount": []any{
			map[string]any{"type": "bind", "source": "local", "target": "/bound"},
			map[string]any{"type": "tmpfs", "target": "/scratch", "tmpfs_options": map[string]any{"size": 1 << 20}},
		},
	})
	must.NoError(t, d.ValidateConfig(tc.Config))
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	res := waitExit(t, d, tc.ID, time.Minute)
	out := readLog(t, tc, tc.StdoutPrefix())
	must.True(t, res.Successful(), must.Sprintf("%+v: %s %s", res, out, readLog(t, tc, tc.StderrPrefix())))
	must.StrContains(t, out, "tmpfs\n")
	must.StrNotContains(t, out, "logs-writable")
	must.StrNotContains(t, out, "ro-writable")
	b, err := os.ReadFile(filepath.Join(tc.TaskDir, "data/f"))
	must.NoError(t, err)
	must.Eq(t, "v\n", string(b))
	b, err = os.ReadFile(filepath.Join(tc.TaskDir, "local/g"))
	must.NoError(t, err)
	must.Eq(t, "m\n", string(b))
	must.NoError(t, d.DestroyTask(tc.ID))

	// Out of the alloc dir: refused without volumes enabled, as a
	// validation error when the task starts.
	esc := newTask(t, map[string]any{"image": dockertest.Image, "command": "true", "volumes": []any{"../../../etc:/host-etc"}})
	_, err = d.StartTask(esc)
	var ve *drivers.ValidationError
	must.True(t, errors.As(err, &ve), must.Sprintf("%v", err))
	must.ErrorContains(t, err, "volumes are not enabled")

	// With volumes enabled a host path is mounted; the SELinux label
	// reaches every bind's options (the engine ignores it where SELinux
	// is off, as here).
	hostDir := t.TempDir()
	must.NoError(t, os.WriteFile(filepath.Join(hostDir, "h"), []byte("host\n"), 0o644))
	dv := newDriver(t, e, map[string]any{"volumes": map[string]any{"enabled": true, "selinuxlabel": "z"}})
	hv := newTask(t, map[string]any{"image": dockertest.Image, "command": "cat", "args": []any{"/h/h"}, "volumes": []any{hostDir + ":/h:ro"}})
	_, err = dv.StartTask(hv)
	must.NoError(t, err)
	must.True(t, waitExit(t, dv, hv.ID, time.Minute).Successful())
	must.Eq(t, "host\n", readLog(t, hv, hv.StdoutPrefix()))
	ins, err := e.Client.ContainerInspect(context.Background(), "web-"+hv.AllocID, client.ContainerInspectOptions{})
	must.NoError(t, err)
	must.SliceContains(t, ins.Container.HostConfig.Binds, hostDir+":/h:ro,z")
	must.SliceContains(t, ins.Container.HostConfig.Binds, hv.LogDir+":/alloc/logs:ro,z")
	must.NoError(t, dv.DestroyTask(hv.ID))

	// A volume_driver makes volumes' sources volume names.
	nv := newTask(t, map[string]any{"image": dockertest.Image, "command": "sh", "args": []any{"-c", "echo kept > /v/f"},
		"volume_driver": "local", "volumes": []any{"nqvol-" + strings.ToLower(hv.AllocID[len(hv.AllocID)-6:]) + ":/v"}})
	_, err = dv.StartTask(nv)
	must.NoError(t, err)
	must.True(t, waitExit(t, dv, nv.ID, time.Minute).Successful())
	ins, err = e.Client.ContainerInspect(context.Background(), "web-"+nv.AllocID, client.ContainerInspectOptions{})
	must.NoError(t, err)
	must.Eq(t, "local", ins.Container.HostConfig.VolumeDriver)
	var vol string
	for _, mp := range ins.Container.Mounts {
		if mp.Destination == "/v" {
			vol = mp.Name
			must.Eq(t, "volume", string(mp.Type))
		}
	}
	must.StrHasPrefix(t, "nqvol-", vol)
	must.NoError(t, dv.DestroyTask(nv.ID))
	_, err = e.Client.VolumeRemove(context.Background(), vol, client.VolumeRemoveOptions{Force: true})
	must.NoError(t, err)
}

// A task's logging block sets the engine's copy; the alloc's log files
// get the output all the same.
func TestDriver_TaskLogging(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, nil)
	tc := newTask(t, map[string]any{"image": dockertest.Image, "command": "echo", "args": []any{"logged"},
		"logging": []any{map[string]any{"type": "local", "config": []any{map[string]any{"max-size": "1m"}}}}})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	must.True(t, waitExit(t, d, tc.ID, time.Minute).Successful())
	must.Eq(t, "logged\n", readLog(t, tc, tc.StdoutPrefix()))
	ins, err := e.Client.ContainerInspect(context.Background(), "web-"+tc.AllocID, client.ContainerInspectOptions{})
	must.NoError(t, err)
	must.Eq(t, "local", ins.Container.HostConfig.LogConfig.Type)
	must.Eq(t, map[string]string{"max-size": "1m"}, ins.Container.HostConfig.LogConfig.Config)
	must.NoError(t, d.DestroyTask(tc.ID))

	// disable_log_collection leaves the output with the engine.
	dn := newDriver(t, e, map[string]any{"disable_log_collection": true, "gc": map[string]any{"container": false}})
	tn := newTask(t, map[string]any{"image": dockertest.Image, "command": "echo", "args": []any{"kept"}})
	_, err = dn.StartTask(tn)
	must.NoError(t, err)
	must.True(t, waitExit(t, dn, tn.ID, time.Minute).Successful())
	must.Eq(t, "", readLog(t, tn, tn.StdoutPrefix()))
	logs, err := e.Client.ContainerLogs(context.Background(), "web-"+tn.AllocID, client.ContainerLogsOptions{ShowStdout: true})
	must.NoError(t, err)
	raw, err := io.ReadAll(logs)
	must.NoError(t, err)
	logs.Close()
	must.StrContains(t, string(raw), "kept")
	must.NoError(t, dn.DestroyTask(tn.ID))
	_, err = e.Client.ContainerRemove(context.Background(), "web-"+tn.AllocID, client.ContainerRemoveOptions{Force: true})
	must.NoError(t, err)
}

// cpu_hard_limit caps the task at its share of the node's compute.
func TestDriver_CPUHardLimit(t *testing.T) {
	e := dockertest.Require(t)
	pc, err := ParsePluginConfig(map[string]any{"endpoint": e.Host})
	must.NoError(t, err)
	d := New(Options{Config: pc, TotalCompute: func() int64 { return 4000 }})
	tc := newTask(t, map[string]any{"image": dockertest.Image, "command": "true", "cpu_hard_limit": true, "cpu_cfs_period": 50000})
	tc.Resources = &drivers.Resources{CPUShares: 1000, MemoryMB: 32}
	_, err = d.StartTask(tc)
	must.NoError(t, err)
	must.True(t, waitExit(t, d, tc.ID, time.Minute).Successful())
	ins, err := e.Client.ContainerInspect(context.Background(), "web-"+tc.AllocID, client.ContainerInspectOptions{})
	must.NoError(t, err)
	must.Eq(t, int64(50000), ins.Container.HostConfig.CPUPeriod)
	// A quarter of the node: a quarter of every core.
	must.Eq(t, int64(12500*runtime.NumCPU()), ins.Container.HostConfig.CPUQuota)
	must.NoError(t, d.DestroyTask(tc.ID))

	// Without the node's compute the limit cannot be honoured.
	unknown := New(Options{Config: pc})
	tu := newTask(t, map[string]any{"image": dockertest.Image, "command": "true", "cpu_hard_limit": true})
	_, err = unknown.StartTask(tu)
	must.ErrorContains(t, err, "cpu_hard_limit needs")
}

// Devices, health checks, runtime and cgroup namespace reach the
// container; an image archive in the task's local dir is loaded.
func TestDriver_ExtraKeys(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, nil)
	tc := newTask(t, map[string]any{
		"image": dockertest.Image, "command": "sh", "args": []any{"-c", `[ -c /dev/nqnull ] && echo x > /dev/nqnull && echo dev-ok`},
		"devices":      []any{map[string]any{"host_path": "/dev/null", "container_path": "/dev/nqnull"}},
		"healthchecks": map[string]any{"disable": true},
		"runtime":      "runc",
		"cgroupns":     "private",
	})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	must.True(t, waitExit(t, d, tc.ID, time.Minute).Successful(), must.Sprint(readLog(t, tc, tc.StderrPrefix())))
	must.Eq(t, "dev-ok\n", readLog(t, tc, tc.StdoutPrefix()))
	ins, err := e.Client.ContainerInspect(context.Background(), "web-"+tc.AllocID, client.ContainerInspectOptions{})
	must.NoError(t, err)
	must.Eq(t, []string{"NONE"}, ins.Container.Config.Healthcheck.Test)
	must.Eq(t, "runc", ins.Container.HostConfig.Runtime)
	must.NoError(t, d.DestroyTask(tc.ID))

	// load: the archive of an image the engine no longer has.
	const loaded = "nomadq-test/load:1"
	must.NoError(t, e.ImportImage(loaded))
	saved, err := e.Client.ImageSave(context.Background(), []string{loaded})
	must.NoError(t, err)
	lt := newTask(t, map[string]any{"image": loaded, "load": "img.tar", "command": "echo", "args": []any{"loaded"}})
	f, err := os.Create(filepath.Join(lt.TaskDir, "local", "img.tar"))
	must.NoError(t, err)
	_, err = io.Copy(f, saved)
	must.NoError(t, err)
	must.NoError(t, f.Close())
	saved.Close()
	_, err = e.Client.ImageRemove(context.Background(), loaded, client.ImageRemoveOptions{Force: true})
	must.NoError(t, err)
	_, err = d.StartTask(lt)
	must.NoError(t, err)
	must.True(t, waitExit(t, d, lt.ID, time.Minute).Successful())
	must.Eq(t, "loaded\n", readLog(t, lt, lt.StdoutPrefix()))
	must.NoError(t, d.DestroyTask(lt.ID))
}

// A running container with Nomad's alloc label that no task tracks is
// removed once older than creation_grace; tracked and unlabelled ones
// stay, and dry_run only reports.
func TestDriver_DanglingContainers(t *testing.T) {
	e := dockertest.Require(t)
	d := newDriver(t, e, nil)
	tc := newTask(t, map[string]any{"image": dockertest.Image, "command": "sleep", "args": []any{"600"}})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	t.Cleanup(func() { _ = d.DestroyTask(tc.ID) })

	run := func(labels map[string]string) string {
		t.Helper()
		ctx := context.Background()
		res, err := e.Client.ContainerCreate(ctx, client.ContainerCreateOptions{
			Config:     &container.Config{Image: dockertest.Image, Cmd: []string{"sleep", "600"}, Labels: labels},
			HostConfig: &container.HostConfig{NetworkMode: "none"},
		})
		must.NoError(t, err)
		_, err = e.Client.ContainerStart(ctx, res.ID, client.ContainerStartOptions{})
		must.NoError(t, err)
		t.Cleanup(func() { _, _ = e.Client.ContainerRemove(ctx, res.ID, client.ContainerRemoveOptions{Force: true}) })
		return res.ID
	}
	orphan := run(map[string]string{LabelAllocID: "gone-alloc"})
	other := run(map[string]string{"team": "not-nomad"})

	// Now: all are younger than the grace.
	found, err := d.removeDangling(time.Now())
	must.NoError(t, err)
	must.SliceEmpty(t, found)

	later := time.Now().Add(10 * time.Minute)
	dry := newDriver(t, e, map[string]any{"gc": map[string]any{"dangling_containers": map[string]any{"dry_run": true}}})
	found, err = dry.removeDangling(later)
	must.NoError(t, err)
	must.SliceContains(t, found, orphan, must.Sprint("the other driver's task is untracked here too"))
	must.SliceNotContains(t, found, other)
	_, err = e.Client.ContainerInspect(context.Background(), orphan, client.ContainerInspectOptions{})
	must.NoError(t, err, must.Sprint("dry run removes nothing"))

	found, err = d.removeDangling(later)
	must.NoError(t, err)
	must.Eq(t, []string{orphan}, found)
	_, err = e.Client.ContainerInspect(context.Background(), orphan, client.ContainerInspectOptions{})
	must.Error(t, err)
	for _, id := range []string{other, mustGet(t, d, tc.ID).containerID} {
		_, err = e.Client.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
		must.NoError(t, err)
	}
}

// A tcp:// endpoint behind TLS is reached with the plugin's tls block; a
// CA the engine's certificate does not chain to fails the fingerprint.
func TestDriver_TLSEndpoint(t *testing.T) {
	e := dockertest.Require(t)
	sock := strings.TrimPrefix(e.Host, "unix://")
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "docker" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}},
	}
	srv := httptest.NewTLSServer(proxy)
	defer srv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	must.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644))
	endpoint := "tcp://" + strings.TrimPrefix(srv.URL, "https://")

	pc, err := ParsePluginConfig(map[string]any{"endpoint": endpoint, "tls": map[string]any{"ca": ca}})
	must.NoError(t, err)
	fp := New(Options{Config: pc}).Fingerprint()
	must.True(t, fp.Healthy, must.Sprint(fp.HealthDescription))
	must.NotEq(t, "", fp.Attributes["driver.docker.version"])

	// httptest's servers share one certificate: make another CA.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must.NoError(t, err)
	wrong := filepath.Join(dir, "wrong.pem")
	must.NoError(t, os.WriteFile(wrong, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	pc, err = ParsePluginConfig(map[string]any{"endpoint": endpoint, "tls": map[string]any{"ca": wrong}})
	must.NoError(t, err)
	must.False(t, New(Options{Config: pc}).Fingerprint().Healthy)

	// Plain HTTP to a TLS endpoint does not answer either.
	pc, err = ParsePluginConfig(map[string]any{"endpoint": endpoint})
	must.NoError(t, err)
	must.False(t, New(Options{Config: pc}).Fingerprint().Healthy)
}
