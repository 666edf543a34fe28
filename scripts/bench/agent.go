package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/nomad/api"
)

// agentProc is one `nomad agent` process started from the binary under
// test, on 127.0.0.1 with ports of its own.
type agentProc struct {
	cmd     *exec.Cmd
	addr    string // http://127.0.0.1:port
	client  *api.Client
	logPath string
	started time.Time
	exited  chan struct{} // closed when the process has exited
	exitErr error
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startAgent runs bin/nomad agent with args plus ports and a config that
// opens the pprof endpoint (used to collect garbage before reading RSS);
// its output goes to a log file under the work dir.
func (r *runner) startAgent(name string, args ...string) (*agentProc, error) {
	return r.startAgentEnv(name, nil, args...)
}

// startAgentEnv is startAgent with extra environment variables for the
// agent's process.
func (r *runner) startAgentEnv(name string, env []string, args ...string) (*agentProc, error) {
	var ports [3]int
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	cfg := filepath.Join(r.workDir, name+"-debug.hcl")
	if err := os.WriteFile(cfg, []byte("enable_debug = true\n"), 0o644); err != nil {
		return nil, err
	}
	args = append(args, "-bind", "127.0.0.1",
		"-http-port", strconv.Itoa(ports[0]), "-rpc-port", strconv.Itoa(ports[1]), "-serf-port", strconv.Itoa(ports[2]),
		"-config", cfg)
	logPath := filepath.Join(r.workDir, name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(r.bin, append([]string{"agent"}, args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	a := &agentProc{cmd: cmd, addr: fmt.Sprintf("http://127.0.0.1:%d", ports[0]), logPath: logPath, exited: make(chan struct{})}
	a.started = time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { a.exitErr = cmd.Wait(); logf.Close(); close(a.exited) }()
	a.client, err = api.NewClient(&api.Config{Address: a.addr, HttpClient: driverHTTPClient()})
	if err != nil {
		a.stop()
		return nil, err
	}
	return a, nil
}

// waitLeader waits until the agent answers with a leader and ready(c)
// holds, and returns how long after the process started that was.
func (a *agentProc) waitLeader(timeout time.Duration, ready func(*api.Client) bool) (time.Duration, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-a.exited:
			return 0, fmt.Errorf("agent exited before it was ready: %v (log %s:\n%s)", a.exitErr, a.logPath, tail(a.logPath))
		default:
		}
		if l, err := a.client.Status().Leader(); err == nil && l != "" && (ready == nil || ready(a.client)) {
			return time.Since(a.started), nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0, fmt.Errorf("agent not ready after %s (log %s:\n%s)", timeout, a.logPath, tail(a.logPath))
}

// waitNode waits for the dev agent's own client node to be ready.
func (a *agentProc) waitNode(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		nodes, _, err := a.client.Nodes().List(nil)
		if err == nil {
			for _, n := range nodes {
				if n.Status == "ready" {
					return nil
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("no ready node after %s (log %s:\n%s)", timeout, a.logPath, tail(a.logPath))
}

// rssAfterGC has the agent collect garbage (the heap profile with gc=1),
// twice with a second between, and returns its VmRSS afterwards.
func (a *agentProc) rssAfterGC() (float64, error) {
	st, _, err := a.memAfterGC()
	return st.VmRSS, err
}

// goMem is what the Go runtime reports holding after a collection: the
// live heap, and the spans of goroutine stacks.
type goMem struct {
	HeapAlloc, StackInuse float64 // bytes
}

// memAfterGC is rssAfterGC with the process's status and the runtime's
// own account, so that a growing RSS can be told apart from a growing
// live heap. The collections are forced by binary heap profiles, whose
// garbage is small; the runtime's account comes from a text profile
// (debug=1, with the memory statistics at its end) fetched only after
// RSS is read: its text is a few MiB after a drain, growing with every
// new call path the agent has sampled, and read before it the text's
// garbage was part of the RSS measured.
func (a *agentProc) memAfterGC() (procStatus, goMem, error) {
	get := func(query string) (string, error) {
		resp, err := http.Get(a.addr + "/v1/agent/pprof/heap?" + query)
		if err != nil {
			return "", err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return "", err
		}
		if resp.StatusCode != 200 {
			return "", fmt.Errorf("heap profile: status %d", resp.StatusCode)
		}
		return string(body), nil
	}
	for range 2 {
		if _, err := get("gc=1"); err != nil {
			return procStatus{}, goMem{}, err
		}
		time.Sleep(time.Second)
	}
	st, err := a.status()
	if err != nil {
		return st, goMem{}, err
	}
	text, err := get("gc=1&debug=1")
	if err != nil {
		return st, goMem{}, err
	}
	mem, err := parseMemStats(text)
	return st, mem, err
}

// parseMemStats reads HeapAlloc and the stack spans in use from the
// "# Name = value" lines of a debug=1 heap profile.
func parseMemStats(text string) (goMem, error) {
	var mem goMem
	found := 0
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != "#" || f[2] != "=" {
			continue
		}
		v, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			continue
		}
		switch f[1] {
		case "HeapAlloc":
			mem.HeapAlloc, found = v, found+1
		case "Stack": // "# Stack = inuse / sys"
			mem.StackInuse, found = v, found+1
		}
	}
	if found != 2 {
		return mem, fmt.Errorf("heap profile: no HeapAlloc or Stack in its memory statistics")
	}
	return mem, nil
}

// procStatus is the part of /proc/PID/status the memory figures use:
// resident memory split into anonymous pages (the Go heap, stacks and
// runtime metadata) and file pages (mostly the binary's own code), and
// the number of OS threads.
type procStatus struct {
	VmRSS, RssAnon, RssFile float64 // bytes
	Threads                 int
}

// status reads /proc/PID/status of the agent process.
func (a *agentProc) status() (procStatus, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", a.cmd.Process.Pid))
	if err != nil {
		return procStatus{}, err
	}
	return parseProcStatus(string(b))
}

// parseProcStatus reads the kB lines and the thread count of a
// /proc/PID/status text; VmRSS is required, the others are kept when
// present (kernels before 4.5 have no RssAnon or RssFile).
func parseProcStatus(text string) (procStatus, error) {
	var st procStatus
	seen := false
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			st.VmRSS, seen = v*1024, true
		case "RssAnon:":
			st.RssAnon = v * 1024
		case "RssFile:":
			st.RssFile = v * 1024
		case "Threads:":
			st.Threads = int(v)
		}
	}
	if !seen {
		return st, fmt.Errorf("no VmRSS in the process status")
	}
	return st, nil
}

// stop interrupts the agent (a graceful shutdown), and kills its process
// group if it has not exited after 30 s.
func (a *agentProc) stop() {
	if a.cmd.Process == nil {
		return
	}
	_ = a.cmd.Process.Signal(os.Interrupt)
	select {
	case <-a.exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
		<-a.exited
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}

// supportsSimNodes reports whether `nomad agent` accepts -sim-nodes: its
// usage text names the flag.
func supportsSimNodes(bin string) bool {
	out, _ := exec.Command(bin, "agent", "-h").CombinedOutput()
	return strings.Contains(string(out), "-sim-nodes")
}

// driverConns is how many connections the driver's client keeps open to
// an agent: at least as many as it has requests in flight (64 at most,
// see offer).
const driverConns = 128

// driverHTTPClient is the HTTP client under the driver's api client. Its
// requests come from up to 64 goroutines at once, and the api client's
// default pool keeps GOMAXPROCS+1 idle connections per host (3 on a
// 2-core machine): all but three of the requests in flight then closed
// their connection when done and the next ones opened new ones, about
// one TCP connection per registration (5,000 sockets left in TIME_WAIT
// after a 1,000 jobs/s step), a cost to the agent and the driver that a
// client keeping its connections, as a job submitter would, does not
// pay.
func driverHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = driverConns
	t.MaxIdleConnsPerHost = driverConns
	return &http.Client{Transport: t}
}
