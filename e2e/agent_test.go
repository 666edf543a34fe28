package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/tlsutil"
)

// nomadBin is the binary under test, built once by TestMain.
var nomadBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "nomadq-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	nomadBin = filepath.Join(dir, "nomad")
	// The e2etest tag builds in the fault hooks tests drive through the
	// environment (a client's clock offset); without their variables set
	// the binary behaves as a release build.
	build := exec.Command("go", "build", "-tags", "e2etest", "-o", nomadBin, "../cmd/nomad")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build nomad:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func longTests(t *testing.T) {
	if os.Getenv("NOMADQ_E2E_LONG") != "1" {
		t.Skip("long end-to-end test: run with NOMADQ_E2E_LONG=1 (make e2e-long)")
	}
}

// freePorts returns n ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		must.NoError(t, err)
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// agentProc is one `nomad agent` process.
type agentProc struct {
	name    string
	cmd     *exec.Cmd
	config  string
	flags   []string // after -config, e.g. -dev
	dataDir string
	http    string
	rpc     string
	serf    int
	// apiTLS is what api clients reach an agent with tls.http with.
	apiTLS *api.TLSConfig
	// httpClient is what every api client of the agent shares (see api).
	apiMu      sync.Mutex
	httpClient *http.Client
	logMu      sync.Mutex
	log        strings.Builder
	exited     chan struct{}
	env        []string
	netns      string
}

// agentSpec describes an agent to start.
type agentSpec struct {
	name      string
	server    bool
	expect    int
	join      []string // serf addresses
	client    bool
	servers   []string // RPC addresses, for a client-only agent
	dataDir   string
	http, rpc int
	serf      int
	// tls, when set, is written as the tls block; apiTLS is then what
	// the test's api clients use.
	tls    *tlsutil.Config
	apiTLS *api.TLSConfig
	// env is added to the agent's environment (test hooks' variables).
	env []string
	// serverHCL is added inside the server block.
	serverHCL string
	// addr is the address the agent binds and is reached on (empty:
	// 127.0.0.1); netns, when set, is the network namespace it runs in.
	addr  string
	netns string
}

func (s agentSpec) bindAddr() string {
	if s.addr == "" {
		return "127.0.0.1"
	}
	return s.addr
}

func (s agentSpec) hcl() string {
	var b strings.Builder
	fmt.Fprintf(&b, "name = %q\ndata_dir = %q\nbind_addr = %q\nlog_level = \"INFO\"\n", s.name, s.dataDir, s.bindAddr())
	fmt.Fprintf(&b, "ports {\n  http = %d\n  rpc = %d\n  serf = %d\n}\n", s.http, s.rpc, s.serf)
	if s.server {
		fmt.Fprintf(&b, "server {\n  enabled = true\n  bootstrap_expect = %d\n", s.expect)
		b.WriteString(s.serverHCL)
		if len(s.join) > 0 {
			fmt.Fprintf(&b, "  server_join {\n    retry_join = [%s]\n    retry_interval = \"200ms\"\n  }\n", quoteList(s.join))
		}
		b.WriteString("}\n")
	}
	if s.client {
		b.WriteString("client {\n  enabled = true\n")
		if len(s.servers) > 0 {
			fmt.Fprintf(&b, "  servers = [%s]\n", quoteList(s.servers))
		}
		b.WriteString("}\nplugin \"raw_exec\" {\n  config {\n    enabled = true\n  }\n}\n")
	}
	if t := s.tls; t != nil {
		fmt.Fprintf(&b, "tls {\n  http = %t\n  rpc = %t\n  ca_file = %q\n  cert_file = %q\n  key_file = %q\n", t.EnableHTTP, t.EnableRPC, t.CAFile, t.CertFile, t.KeyFile)
		fmt.Fprintf(&b, "  verify_server_hostname = %t\n  verify_https_client = %t\n}\n", t.VerifyServerHostname, t.VerifyHTTPSClient)
	}
	return b.String()
}

func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, it := range items {
		q[i] = fmt.Sprintf("%q", it)
	}
	return strings.Join(q, ", ")
}

// startAgent writes the spec's config and starts the agent. The test's
// cleanup kills it (and its process group) if it is still running.
func startAgent(t *testing.T, spec agentSpec) *agentProc {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), spec.name+".hcl")
	must.NoError(t, os.WriteFile(cfgPath, []byte(spec.hcl()), 0o600))
	a := &agentProc{
		name:    spec.name,
		config:  cfgPath,
		dataDir: spec.dataDir,
		http:    fmt.Sprintf("http://%s:%d", spec.bindAddr(), spec.http),
		rpc:     fmt.Sprintf("%s:%d", spec.bindAddr(), spec.rpc),
		serf:    spec.serf,
		apiTLS:  spec.apiTLS,
		env:     spec.env,
		netns:   spec.netns,
	}
	if spec.tls != nil && spec.tls.EnableHTTP {
		a.http = fmt.Sprintf("https://%s:%d", spec.bindAddr(), spec.http)
	}
	a.start(t)
	return a
}

func (a *agentProc) start(t *testing.T) {
	t.Helper()
	args := append([]string{"agent", "-config", a.config}, a.flags...)
	cmd := exec.Command(nomadBin, args...)
	if a.netns != "" {
		// ip execs the agent in place: its PID and process group are
		// the agent's.
		cmd = exec.Command("ip", append([]string{"netns", "exec", a.netns, nomadBin}, args...)...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if len(a.env) > 0 {
		cmd.Env = append(os.Environ(), a.env...)
	}
	out, err := cmd.StdoutPipe()
	must.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	must.NoError(t, cmd.Start())
	a.cmd = cmd
	a.exited = make(chan struct{})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		signaled := false
		for sc.Scan() {
			line := sc.Text()
			a.logMu.Lock()
			a.log.WriteString(line + "\n")
			a.logMu.Unlock()
			if !signaled && strings.HasPrefix(line, "==> HTTP API listening on") {
				signaled = true
				close(ready)
			}
		}
		_ = cmd.Wait()
		close(a.exited)
	}()
	t.Cleanup(func() {
		a.kill(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("log of agent %s:\n%s", a.name, a.output())
		}
	})
	select {
	case <-ready:
	case <-a.exited:
		t.Fatalf("agent %s exited at start:\n%s", a.name, a.output())
	case <-time.After(30 * time.Second):
		t.Fatalf("agent %s did not report its HTTP address:\n%s", a.name, a.output())
	}
}

func (a *agentProc) output() string {
	a.logMu.Lock()
	defer a.logMu.Unlock()
	return a.log.String()
}

// kill signals the agent's process group and waits for it to exit.
func (a *agentProc) kill(sig syscall.Signal) {
	select {
	case <-a.exited:
		return
	default:
	}
	_ = syscall.Kill(-a.cmd.Process.Pid, sig)
	select {
	case <-a.exited:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
		<-a.exited
	}
}

// api returns an api client of the agent. Every client of an agent
// shares one HTTP client: a test polling with a new transport each time
// would open a connection per poll and run into
// limits.http_max_conns_per_client.
func (a *agentProc) api(t *testing.T) *api.Client {
	t.Helper()
	a.apiMu.Lock()
	defer a.apiMu.Unlock()
	cfg := api.DefaultConfig()
	cfg.Address = a.http
	if a.apiTLS != nil {
		cfg.TLSConfig = a.apiTLS
	}
	if a.httpClient == nil {
		hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		must.NoError(t, api.ConfigureTLS(hc, cfg.TLSConfig))
		a.httpClient = hc
	}
	cfg.HttpClient = a.httpClient
	c, err := api.NewClient(cfg)
	must.NoError(t, err)
	return c
}

// waitFor retries f until it succeeds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, f func() error) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(f), wait.Timeout(timeout), wait.Gap(50*time.Millisecond)))
}

// batchJob returns a raw_exec batch job running the shell script.
func batchJob(id, script string) *api.Job {
	job := api.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"*"}
	task := api.NewTask("main", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", script}}
	task.Resources = &api.Resources{CPU: new(50), MemoryMB: new(32)}
	tg := api.NewTaskGroup("work", 1)
	tg.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}
