// Package dockertest starts a Docker Engine of a test package's own: a
// dockerd with its own data root, exec root and socket under a temp dir,
// no bridge and no iptables rules unless asked for one (Options.Bridge:
// a bridge of its own, removed with its iptables rules at the end), so
// tests neither touch nor depend on a system engine. It also builds a small test image without network:
// Debian's busybox-static imported as a one-layer rootfs; and runs
// Debian's docker-registry on 127.0.0.1 for the pull tests, the test
// image pushed to it by the engine (NewRegistry, Publish).
//
// A package starts one engine in TestMain and its tests call Require,
// which skips them with the reason when the engine could not be started
// (not root, dockerd or busybox missing).
package dockertest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"
)

// Image is the reference of the busybox test image every engine holds.
const Image = "nomadq-test/busybox:1"

// BusyboxPath is where Debian's busybox-static installs its binary.
const BusyboxPath = "/bin/busybox"

// applets are the commands linked to busybox in the test image.
var applets = []string{
	"sh", "ash", "echo", "sleep", "cat", "env", "id", "ls", "head", "tail", "dd",
	"true", "false", "kill", "ps", "printf", "test", "[", "mkdir", "rm", "touch",
	"hostname", "pwd", "yes", "seq", "grep", "wc", "whoami", "tr", "cut", "free", "stat",
	"httpd", "wget", "nc", "readlink",
}

// Engine is a running dockerd of the tests' own.
type Engine struct {
	// Host is the engine's endpoint, "unix://<dir>/d.sock".
	Host string
	// Client talks to the engine, API version negotiated.
	Client *client.Client

	dir    string
	cmd    *exec.Cmd
	done   chan struct{}
	log    *os.File
	bridge *bridgeNet
	stop   sync.Once
}

var (
	current *Engine
	skipWhy string
)

// Main starts an engine, runs the package's tests and stops the engine;
// call it from TestMain. Tests run with Require skip when the engine
// could not start, with the reason.
func Main(m *testing.M) {
	eng, err := Start()
	if err != nil {
		skipWhy = err.Error()
	}
	current = eng
	code := m.Run()
	if eng != nil {
		eng.Stop()
	}
	os.Exit(code)
}

// Require returns the engine Main started, or skips the test saying why
// there is none.
func Require(t testing.TB) *Engine {
	t.Helper()
	if current == nil {
		reason := skipWhy
		if reason == "" {
			reason = "dockertest.Main did not run"
		}
		t.Skipf("no test Docker engine: %s", reason)
	}
	return current
}

// StartT starts an engine for one test (and its subtests) and stops it
// when the test ends; for packages whose TestMain is taken. It skips the
// test, saying why, where the engine cannot start.
func StartT(t testing.TB) *Engine {
	t.Helper()
	return StartTWith(t, Options{})
}

// StartTWith is StartT with options.
func StartTWith(t testing.TB, opts Options) *Engine {
	t.Helper()
	e, err := StartWith(opts)
	if err != nil {
		t.Skipf("no test Docker engine: %v", err)
	}
	t.Cleanup(e.Stop)
	return e
}

// Start starts a dockerd under a fresh temp dir, waits until it answers
// and imports the test image.
func Start() (*Engine, error) { return StartWith(Options{}) }

// StartWith is Start with options.
func StartWith(opts Options) (*Engine, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("dockerd needs root")
	}
	dockerd, err := exec.LookPath("dockerd")
	if err != nil {
		return nil, fmt.Errorf("dockerd not found (Debian package docker.io; make test installs it): %w", err)
	}
	if _, err := os.Stat(BusyboxPath); err != nil {
		return nil, fmt.Errorf("busybox not found (Debian package busybox-static): %w", err)
	}
	// Unix socket paths are limited to about 108 bytes: keep the dir short.
	dir, err := os.MkdirTemp("", "nqd")
	if err != nil {
		return nil, err
	}
	e := &Engine{Host: "unix://" + filepath.Join(dir, "d.sock"), dir: dir, done: make(chan struct{})}
	e.log, err = os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	netArgs := []string{"--bridge=none", "--iptables=false", "--ip6tables=false"}
	if opts.Bridge {
		if e.bridge, err = newBridge(); err != nil {
			e.Stop()
			return nil, fmt.Errorf("the engine's bridge: %w", err)
		}
		netArgs = []string{"--bridge=" + e.bridge.name, "--iptables=true", "--ip6tables=false", "--ip-forward=false"}
	}
	e.cmd = exec.Command(dockerd, append(netArgs,
		"--data-root", filepath.Join(dir, "data"),
		"--exec-root", filepath.Join(dir, "x"),
		"--pidfile", filepath.Join(dir, "d.pid"),
		"-H", e.Host,
		// Where a system containerd runs, dockerd uses it: namespaces of
		// this engine's own keep its containers apart from others'.
		"--containerd-namespace", filepath.Base(dir),
		"--containerd-plugins-namespace", filepath.Base(dir)+"-plugins",
	)...)
	e.cmd.Stdout, e.cmd.Stderr = e.log, e.log
	// Its own process group, so Stop reaches containerd and the shims
	// too; and SIGTERM when the test binary dies (a timeout panic), so
	// no engine outlives its tests.
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	started := make(chan error, 1)
	go func() {
		// The parent-death signal follows the thread that started the
		// process: keep that thread for dockerd's life.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := e.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = e.cmd.Wait()
		close(e.done)
	}()
	if err := <-started; err != nil {
		e.log.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start dockerd: %w", err)
	}

	e.Client, err = client.New(client.WithHost(e.Host), client.WithAPIVersionNegotiation())
	if err != nil {
		e.Stop()
		return nil, err
	}
	if err := e.waitReady(60 * time.Second); err != nil {
		e.Stop()
		return nil, err
	}
	if err := e.importImage(); err != nil {
		e.Stop()
		return nil, fmt.Errorf("import test image: %w", err)
	}
	return e, nil
}

// waitReady waits for the engine to answer a ping.
func (e *Engine) waitReady(limit time.Duration) error {
	return waitAnswer("dockerd", limit, 100*time.Millisecond, e.done, e.LogTail, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := e.Client.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true})
		return err
	})
}

// waitAnswer probes a process the tests started every gap until it
// answers, it exits, or limit passes; the errors quote its log's tail.
func waitAnswer(name string, limit, gap time.Duration, exited <-chan struct{}, tail func() string, probe func() error) error {
	deadline := time.Now().Add(limit)
	for {
		err := probe()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited before answering: %s", name, tail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer within %s: %v; log: %s", name, limit, err, tail())
		}
		time.Sleep(gap)
	}
}

// LogTail returns the last lines dockerd wrote, for failure messages.
func (e *Engine) LogTail() string { return tailLines(filepath.Join(e.dir, "dockerd.log"), 15) }

// tailLines returns the last n lines of a log file.
func tailLines(file string, n int) string {
	b, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// RootfsTar returns a tar of a minimal root filesystem: busybox, its
// applets as symlinks, and /etc/passwd and /etc/group with root and
// nobody.
func RootfsTar() ([]byte, error) {
	bin, err := os.ReadFile(BusyboxPath)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	for _, d := range []string{"bin", "etc", "tmp", "proc", "sys", "dev", "alloc", "local", "secrets"} {
		mode := int64(0o755)
		if d == "tmp" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: mode, ModTime: now}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/busybox", Mode: 0o755, Size: int64(len(bin)), ModTime: now}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	names := append([]string(nil), applets...)
	sort.Strings(names)
	for _, a := range names {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + a, Linkname: "busybox", Mode: 0o777, ModTime: now}); err != nil {
			return nil, err
		}
	}
	files := map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
		"etc/group":  "root:x:0:\nnogroup:x:65534:\n",
	}
	for _, name := range []string{"etc/group", "etc/passwd"} {
		body := files[name]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: now}); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(tw, body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// importImage imports the busybox rootfs as Image.
func (e *Engine) importImage() error {
	return e.ImportImage(Image)
}

// PauseImage is an infra_image for bridge network tests: the busybox
// rootfs whose command sleeps until the container is stopped, as a pause
// container's does. ImportPauseImage imports it.
const PauseImage = "nomadq-test/pause:1"

// ImportPauseImage imports PauseImage.
func (e *Engine) ImportPauseImage() error {
	return e.importRootfs(PauseImage, `ENV PATH=/bin`, `CMD ["/bin/sleep", "2147483647"]`)
}

// ImportImage imports the busybox rootfs under ref (a second name lets a
// test remove an image without losing the shared one).
func (e *Engine) ImportImage(ref string) error {
	return e.importRootfs(ref, `ENV PATH=/bin`, `CMD ["/bin/sh"]`)
}

func (e *Engine) importRootfs(ref string, changes ...string) error {
	rootfs, err := RootfsTar()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := e.Client.ImageImport(ctx,
		client.ImageImportSource{Source: bytes.NewReader(rootfs), SourceName: "-"},
		ref,
		client.ImageImportOptions{Changes: changes})
	if err != nil {
		return err
	}
	defer res.Close()
	_, err = io.Copy(io.Discard, res)
	return err
}

// Stop stops dockerd and its containers (its whole process group),
// unmounts what it left mounted under its dirs and removes them, and
// removes its bridge with its iptables rules; a second call does nothing.
func (e *Engine) Stop() { e.stop.Do(e.stopOnce) }

func (e *Engine) stopOnce() {
	if e.Client != nil {
		e.Client.Close()
	}
	if e.cmd != nil && e.cmd.Process != nil {
		pgid := e.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-e.done:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-e.done
		}
		// containerd-shims live in the group too; make sure none is left.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	if e.log != nil {
		e.log.Close()
	}
	if e.bridge != nil {
		e.bridge.remove()
	}
	unmountUnder(e.dir)
	os.RemoveAll(e.dir)
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(dir string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		if p := fields[4]; p == dir || strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	for _, p := range points {
		_ = unix.Unmount(p, unix.MNT_DETACH)
	}
}

// Proxy forwards a socket of its own to the engine's, so a test can take
// the engine away from a driver and give it back.
type Proxy struct {
	// Host is the proxy's endpoint, "unix://<dir>/p.sock".
	Host   string
	sock   string
	target string

	mu    sync.Mutex
	l     net.Listener
	conns []net.Conn
}

// Proxy starts a proxy to the engine, closed when the test ends.
func (e *Engine) Proxy(t testing.TB) *Proxy {
	t.Helper()
	dir, err := os.MkdirTemp("", "nqp")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "p.sock")
	p := &Proxy{Host: "unix://" + sock, sock: sock, target: strings.TrimPrefix(e.Host, "unix://")}
	if err := p.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(); os.RemoveAll(dir) })
	return p
}

// Open starts (again) accepting and forwarding connections.
func (p *Proxy) Open() error {
	os.Remove(p.sock)
	l, err := net.Listen("unix", p.sock)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("unix", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	return nil
}

// Close stops accepting and cuts the connections it forwards: to a
// client of the proxy, the engine is gone.
func (p *Proxy) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		p.l.Close()
		p.l = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
