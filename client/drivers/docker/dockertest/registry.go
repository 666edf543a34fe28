package dockertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/authconfig"
	"github.com/moby/moby/api/types/registry"
	"github.com/moby/moby/client"
	"golang.org/x/crypto/bcrypt"
)

// RegistryPath is where Debian's docker-registry installs its binary.
const RegistryPath = "/usr/bin/docker-registry"

// Registry is Debian's docker-registry (the distribution project's
// registry, API v2) serving on 127.0.0.1 from a temp dir, which the
// engine reaches over plain HTTP as it does any loopback registry. It
// starts empty: Publish pushes the test image to it and removes it from
// the engine, so that a task must pull it.
type Registry struct {
	// Addr is "127.0.0.1:<port>", the image reference's registry part.
	Addr string

	user, password string
	dir            string
	cmd            *exec.Cmd
	done           chan struct{}
	// base is how many manifest requests the log held after the last
	// Publish: Manifests counts from there.
	base atomic.Int64
}

// manifestRequest matches a pull's manifest request in the registry's
// access log (the engine asks once per pull, by HEAD when it may have
// the image already, by GET otherwise).
var manifestRequest = regexp.MustCompile(`"(GET|HEAD) /v2/\S+/manifests/`)

// NewRegistry starts a docker-registry for the test and stops it when the
// test ends; with a user it asks for HTTP basic auth from an htpasswd
// file (bcrypt, the only hash the registry takes). It skips the test,
// saying why, when the registry is not installed.
func NewRegistry(t testing.TB, user, password string) *Registry {
	t.Helper()
	if _, err := os.Stat(RegistryPath); err != nil {
		t.Skipf("no docker-registry (Debian package docker-registry; make test installs it): %v", err)
	}
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	r := &Registry{Addr: fmt.Sprintf("127.0.0.1:%d", port), user: user, password: password, dir: dir, done: make(chan struct{})}
	config := fmt.Sprintf(`version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
  secret: nomadq-test
`, filepath.Join(dir, "data"), r.Addr)
	if user != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		htpasswd := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(user+":"+string(hash)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		config += fmt.Sprintf("auth:\n  htpasswd:\n    realm: nomadq-test\n    path: %s\n", htpasswd)
	}
	cfgFile := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(r.logPath())
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(RegistryPath, "serve", cfgFile)
	r.cmd.Stdout, r.cmd.Stderr = log, log
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		log.Close()
		t.Fatalf("start docker-registry: %v", err)
	}
	go func() {
		_ = r.cmd.Wait()
		log.Close()
		close(r.done)
	}()
	t.Cleanup(r.stop)
	if err := r.waitReady(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	return r
}

// freePort returns a loopback port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (r *Registry) logPath() string { return filepath.Join(r.dir, "registry.log") }

// waitReady waits for the registry to answer its API root (200, or 401
// behind auth).
func (r *Registry) waitReady(limit time.Duration) error {
	return waitAnswer("docker-registry", limit, 50*time.Millisecond, r.done, r.LogTail, func() error {
		resp, err := http.Get("http://" + r.Addr + "/v2/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusUnauthorized {
			return fmt.Errorf("status %s", resp.Status)
		}
		return nil
	})
}

func (r *Registry) stop() {
	if r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	}
}

// LogTail returns the last lines the registry wrote, for failure
// messages.
func (r *Registry) LogTail() string { return tailLines(r.logPath(), 10) }

// Manifests counts the manifest requests the registry answered since the
// last Publish, from its access log.
func (r *Registry) Manifests() int64 {
	return r.manifestsLogged() - r.base.Load()
}

func (r *Registry) manifestsLogged() int64 {
	b, _ := os.ReadFile(r.logPath())
	return int64(len(manifestRequest.FindAll(b, -1)))
}

// Auth returns the engine's encoding of the registry's credentials (of
// none when it takes anonymous requests: the engine wants the header on
// a push even so).
func (r *Registry) Auth() string {
	if r.user == "" {
		enc, _ := authconfig.Encode(registry.AuthConfig{})
		return enc
	}
	enc, _ := authconfig.Encode(registry.AuthConfig{Username: r.user, Password: r.password, ServerAddress: r.Addr})
	return enc
}

// Publish pushes the engine's test image to the registry as name
// ("repo/path:tag"), removes that reference from the engine again and
// returns it: a task naming it must pull it.
func (r *Registry) Publish(t testing.TB, e *Engine, name string) string {
	t.Helper()
	ref := r.Addr + "/" + name
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := e.Client.ImageTag(ctx, client.ImageTagOptions{Source: Image, Target: ref}); err != nil {
		t.Fatalf("tag %s: %v", ref, err)
	}
	res, err := e.Client.ImagePush(ctx, ref, client.ImagePushOptions{RegistryAuth: r.Auth()})
	if err == nil {
		for msg, merr := range res.JSONMessages(ctx) {
			if merr == nil && msg.Error != nil {
				merr = errors.New(msg.Error.Message)
			}
			if merr != nil {
				err = merr
				break
			}
		}
	}
	if err != nil {
		t.Fatalf("push %s: %v; registry log: %s", ref, err, r.LogTail())
	}
	if _, err := e.Client.ImageRemove(ctx, ref, client.ImageRemoveOptions{}); err != nil {
		t.Fatalf("remove %s from the engine: %v", ref, err)
	}
	r.base.Store(r.manifestsLogged())
	return ref
}

// Gate is a loopback front to a registry that can hold manifest requests,
// so a test can have pulls overlap. The registry behind it does the
// serving and the auth.
type Gate struct {
	// Addr is "127.0.0.1:<port>": an image published as "<registry
	// Addr>/name" is pulled through the gate as "<gate Addr>/name".
	Addr string
	// Manifests counts the manifest requests that reached the gate.
	Manifests atomic.Int64

	mu   sync.Mutex
	hold chan struct{}
}

// Gate starts a gate in front of the registry, closed when the test
// ends.
func (r *Registry) Gate(t testing.TB) *Gate {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &Gate{Addr: l.Addr().String()}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: r.Addr})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.Contains(req.URL.Path, "/manifests/") {
			g.Manifests.Add(1)
			g.mu.Lock()
			hold := g.hold
			g.mu.Unlock()
			if hold != nil {
				select {
				case <-hold:
				case <-req.Context().Done():
					return
				}
			}
		}
		proxy.ServeHTTP(w, req)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		g.Release()
		_ = srv.Close()
	})
	return g
}

// Hold makes manifest requests wait until Release.
func (g *Gate) Hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hold == nil {
		g.hold = make(chan struct{})
	}
}

// Release lets held and later manifest requests through.
func (g *Gate) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hold != nil {
		close(g.hold)
		g.hold = nil
	}
}
