package docstest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// repoRoot is the repository root seen from this package's directory.
const repoRoot = "../.."

// commandTimeout bounds each documented command; a command that waits for
// something that never comes (a stream, a prompt) fails instead of
// hanging the suite.
const commandTimeout = 45 * time.Second

// pages returns README.md and every page under website/, repo-relative
// and sorted.
func pages(t *testing.T) []string {
	t.Helper()
	out := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "website"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(repoRoot, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk website/: %v", err)
	}
	sort.Strings(out[1:])
	return out
}

// readBlocks parses every page and fails the test on a block that is
// neither runnable nor marked, before anything is started.
func readBlocks(t *testing.T) map[string][]Block {
	t.Helper()
	all := map[string][]Block{}
	for _, page := range pages(t) {
		text, err := os.ReadFile(filepath.Join(repoRoot, page))
		if err != nil {
			t.Fatalf("read %s: %v", page, err)
		}
		blocks, err := ParseBlocks(page, string(text))
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		for _, b := range blocks {
			if err := b.MarkerError(); err != nil {
				t.Errorf("%s: %v", b.Where(), err)
			}
			if b.Classify() == KindUnknown {
				t.Errorf("%s: a %q code block the docs test can neither run nor classify; run it (commands start with \"$ \" or \"nomad \", job files contain job \"...\") or put <!-- docs-test: skip (why) --> or another marker (see website/README.md) on the line before the fence", b.Where(), b.Lang)
			}
		}
		all[page] = blocks
	}
	return all
}

// TestDocs_EveryBlockIsRunOrMarked fails on a code block in README.md or
// website/ that the docs test would neither run nor skip for a reason.
func TestDocs_EveryBlockIsRunOrMarked(t *testing.T) {
	readBlocks(t)
}

// TestDocs runs every page's blocks against one dev agent, page by page in
// page order, each page in a directory of its own holding examples/.
func TestDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev agent and runs every documented command; not in -short")
	}
	// Unclassified blocks are reported here and the rest still runs, so
	// one run shows everything a page change broke.
	all := readBlocks(t)
	bin := buildNomad(t)
	curlShim(t, filepath.Dir(bin))
	addr := startAgent(t, bin, agentConfig)
	acl := &aclAgent{t: t, bin: bin}
	examples, err := filepath.Abs(filepath.Join(repoRoot, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	// Setup markers find the jobs pages need but do not show in
	// $DOCS_FIXTURES.
	fixtures, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}

	for _, page := range pages(t) {
		t.Run(page, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Symlink(examples, filepath.Join(dir, "examples")); err != nil {
				t.Fatal(err)
			}
			r := &runner{t: t, dir: dir, env: append(commandEnv(bin, addr, dir), "DOCS_FIXTURES="+fixtures), acl: acl}
			for _, b := range all[page] {
				r.run(b)
			}
		})
	}
}

// runner runs one page's blocks in order.
type runner struct {
	t    *testing.T
	dir  string
	env  []string
	last string // combined output of the last command run
	subs []Sub  // placeholders and their values, from sub markers
	acl  *aclAgent
}

// aclAgent is a second dev agent, with ACLs on, started for the first
// block marked acl. Its management token is the Secret ID the first
// `nomad acl bootstrap` of the pages prints, or, when a page needs one
// before any page bootstrapped, the test's own bootstrap.
type aclAgent struct {
	t     *testing.T // the top-level test, which owns the agent
	bin   string
	addr  string
	token string
}

var secretIDRE = regexp.MustCompile(`(?m)^Secret ID\s*=\s*([0-9a-f-]{36})\s*$`)

// env returns base with the ACL agent's address and, once known, token.
func (a *aclAgent) env(base []string) []string {
	if a.addr == "" {
		a.addr = startAgent(a.t, a.bin, agentConfig+"acl {\n  enabled = true\n}\n")
	}
	env := []string{"NOMAD_ADDR=" + a.addr}
	if a.token != "" {
		env = append(env, "NOMAD_TOKEN="+a.token)
	}
	for _, kv := range base {
		if !strings.HasPrefix(kv, "NOMAD_ADDR=") && !strings.HasPrefix(kv, "NOMAD_TOKEN=") {
			env = append(env, kv)
		}
	}
	return env
}

// learn keeps the first management token a command printed.
func (a *aclAgent) learn(out string) {
	if m := secretIDRE.FindStringSubmatch(out); m != nil && a.token == "" {
		a.token = m[1]
	}
}

// expand replaces the page's placeholders in a command.
func (r *runner) expand(line string) string {
	for _, s := range r.subs {
		line = strings.ReplaceAll(line, s.Word, s.Command)
	}
	return line
}

func (r *runner) run(b Block) {
	t := r.t
	if b.ACL && b.Classify() != KindSkip {
		base := r.env
		defer func() { r.env = base }()
		r.env = r.acl.env(base)
		bootstraps := strings.Contains(b.Text, "nomad acl bootstrap")
		if r.acl.token == "" && !bootstraps {
			out, code := r.shell("nomad acl bootstrap")
			if code != 0 {
				t.Fatalf("%s: bootstrap the ACL agent: exit %d: %s", b.Where(), code, out)
			}
			r.acl.learn(out)
			r.env = r.acl.env(base)
		}
		if bootstraps {
			defer func() { r.env = r.acl.env(base) }()
		}
	}
	for _, s := range b.Setup {
		if out, code := r.shell(r.expand(s)); code != 0 {
			t.Errorf("%s: setup %s exited %d; output:\n%s", b.Where(), s, code, out)
		}
	}
	for _, s := range b.Subs {
		out, code := r.shell(r.expand(s.Command))
		val := strings.TrimSpace(out)
		if code != 0 || val == "" || strings.ContainsAny(val, "\n ") {
			t.Errorf("%s: sub %s: %s exited %d and printed %q; want one word", b.Where(), s.Word, s.Command, code, out)
			continue
		}
		r.subs = append(r.subs, Sub{Word: s.Word, Command: val})
	}
	defer func() {
		for _, a := range b.After {
			if out, code := r.shell(r.expand(a)); code != 0 {
				t.Errorf("%s: after %s exited %d; output:\n%s", b.Where(), a, code, out)
			}
		}
	}()
	switch b.Classify() {
	case KindSkip:
		t.Logf("%s: skipped: %s", b.Where(), b.Skip)
	case KindFile:
		p := filepath.Join(r.dir, b.File)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.Text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if isJob(b.Text) {
			r.validate(b, "job.nomad.hcl", b.Text, "nomad job validate job.nomad.hcl")
		}
	case KindUsage:
		for _, words := range b.UsageCommands() {
			line := "nomad " + strings.Join(words, " ") + " -h"
			out, code := r.shell(line)
			if code != 0 || !strings.Contains(out, "Usage:") {
				t.Errorf("%s: synopsis: %s exited %d; want 0 and a usage text; output:\n%s", b.Where(), line, code, out)
			}
		}
	case KindCommands:
		cmds := b.Commands()
		if b.Exits != nil && len(b.Exits) != len(cmds) {
			t.Errorf("%s: the exits marker has %d codes for %d commands", b.Where(), len(b.Exits), len(cmds))
			return
		}
		for i, c := range cmds {
			want := 0
			switch {
			case b.Exits != nil:
				want = b.Exits[i]
			case i == len(cmds)-1:
				want = b.Exit
			}
			out, code := r.shell(r.expand(c.Line))
			r.last = out
			if b.ACL && r.acl.token == "" {
				r.acl.learn(out)
				r.env = r.acl.env(r.env)
			}
			if code != want {
				t.Errorf("%s: %s\nexited %d, want %d; output:\n%s", b.Where(), c.Line, code, want, out)
				continue
			}
			if b.Output {
				if err := MatchOutput(c.Output, out); err != nil {
					t.Errorf("%s: %s: %v; output:\n%s", b.Where(), c.Line, err, out)
				}
			}
		}
	case KindOutput:
		if err := MatchOutput(strings.Split(b.Text, "\n"), r.last); err != nil {
			t.Errorf("%s: output of the previous command: %v; output:\n%s", b.Where(), err, r.last)
		}
	case KindJob, KindJobFragment:
		text := b.Text
		if b.Classify() == KindJobFragment {
			text = wrapFragment(text)
		}
		r.validate(b, "job.nomad.hcl", text, "nomad job validate job.nomad.hcl")
	case KindAgentConfig:
		// A page shows the block it talks about; the base file makes it
		// a whole configuration, as an agent's -config files are merged.
		r.validate(b, "base.hcl", "data_dir = \"data\"\nserver {\n  enabled = true\n}\n", "true")
		r.validate(b, "agent.hcl", b.Text, "nomad config validate base.hcl agent.hcl")
	case KindJSON:
		if !json.Valid([]byte(b.Text)) {
			t.Errorf("%s: the JSON block does not parse; fix it or mark it skip (why)", b.Where())
		}
	default:
		// Reported by readBlocks.
	}
}

// validate writes text to a scratch file and runs the validating command.
func (r *runner) validate(b Block, name, text, line string) {
	scratch := filepath.Join(r.dir, ".docstest")
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scratch, name), []byte(text+"\n"), 0o644); err != nil {
		r.t.Fatal(err)
	}
	out, code := r.shellIn(scratch, line)
	if code != b.Exit {
		r.t.Errorf("%s: %s exited %d, want %d; output:\n%s\nthe block:\n%s", b.Where(), line, code, b.Exit, out, text)
	}
}

// wrapFragment makes a job of a group, task, template, check or
// variable block: the smallest job around it that the block fits in.
func wrapFragment(text string) string {
	const task = "task \"t\" {\n  driver = \"raw_exec\"\n  config {\n    command = \"/bin/true\"\n  }\n"
	switch firstWord(text) {
	case "variable":
		return text + "\njob \"docs-fragment\" {\n  group \"g\" {\n" + task + "}\n}\n}"
	case "template":
		text = task + text + "\n}"
	case "check":
		text = "network {\n  port \"http\" {}\n}\nservice {\n  name = \"web\"\n  port = \"http\"\n  provider = \"nomad\"\n" + text + "\n}\n" + task + "}"
	}
	switch firstWord(text) {
	case "task":
		text = "group \"g\" {\n" + text + "\n}"
	case "network":
		text = "group \"g\" {\n" + text + "\n}"
	}
	return "job \"docs-fragment\" {\n" + text + "\n}"
}

func (r *runner) shell(line string) (string, int) { return r.shellIn(r.dir, line) }

// shellIn runs line with bash in dir, in its own process group killed
// after commandTimeout, and returns its combined output and exit code.
func (r *runner) shellIn(dir, line string) (string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = dir
	cmd.Env = r.env
	cmd.Stdin = strings.NewReader("")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out) + fmt.Sprintf("\n(killed after %s)", commandTimeout), -1
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		r.t.Fatalf("run %s: %v", line, err)
	}
	return string(out), 0
}

// commandEnv is the environment of documented commands: the built nomad
// first on PATH, the agent's address, and a home of the page's own so
// nothing writes to the real one.
func commandEnv(bin, addr, home string) []string {
	env := []string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"NOMAD_ADDR=" + addr,
		"HOME=" + home,
		"TERM=dumb",
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH" || k == "HOME" || k == "TERM" || strings.HasPrefix(k, "NOMAD_"):
		default:
			env = append(env, kv)
		}
	}
	return env
}

// curlShim puts a curl beside the built nomad that fails (exit 22) on an
// HTTP error status, as `curl -s` alone would not: a documented request
// that the agent refuses is a broken example unless the page marks the
// exit code it expects.
func curlShim(t *testing.T, dir string) {
	t.Helper()
	real, err := exec.LookPath("curl")
	if err != nil {
		t.Fatalf("the docs' curl examples need curl on PATH: %v", err)
	}
	shim := "#!/bin/sh\nexec " + real + " --fail-with-body \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "curl"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
}

// buildNomad builds the nomad binary into a temporary directory.
func buildNomad(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "nomad")
	cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/nomad")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/nomad: %v\n%s", err, out)
	}
	return bin
}

// agentConfig is the dev agent's: raw_exec on, as the pages' examples
// need, and gossip encryption, which the key rotation of
// website/security.md needs (a key made for this test only).
const agentConfig = `log_level = "WARN"
server {
  encrypt = "VEfxfi+Zkj14tK6GVyMKbkl0pfWK+4NrWU/TisEVN/Q="
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`

var listenRE = regexp.MustCompile(`HTTP API listening on (http://\S+)`)

// startAgent starts `nomad agent -dev` on ports the kernel picks, waits
// for its node to be ready and stops it (and every job) when t ends.
func startAgent(t *testing.T, bin, config string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "agent", "-dev", "-config", cfg, "-http-port", "0", "-rpc-port", "0", "-serf-port", "0")
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := os.Create(filepath.Join(dir, "agent.err"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start agent: %v", err)
	}
	addrCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				addrCh <- m[1]
				sent = true
			}
		}
	}()
	var addr string
	select {
	case addr = <-addrCh:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		errText, _ := os.ReadFile(stderr.Name())
		t.Fatalf("the dev agent did not report its HTTP address in 60s; stderr:\n%s", errText)
	}
	t.Cleanup(func() {
		stopJobs(addr)
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		var nodes []struct{ Status string }
		err := getJSON(addr+"/v1/nodes", &nodes)
		if err == nil && len(nodes) > 0 && nodes[0].Status == "ready" {
			return addr
		}
		// With ACLs on, listing nodes needs a token the agent has not
		// made yet: a leader is enough for the ACL pages.
		var leader string
		if err != nil && strings.Contains(err.Error(), "403") && getJSON(addr+"/v1/status/leader", &leader) == nil && leader != "" {
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dev agent's node is not ready after 60s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func getJSON(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// stopJobs purges every job so the client kills what the pages started,
// and waits (briefly) for their allocations to stop.
func stopJobs(addr string) {
	var jobs []struct{ ID, Namespace string }
	if getJSON(addr+"/v1/jobs?namespace=*", &jobs) != nil {
		return
	}
	for _, j := range jobs {
		req, err := http.NewRequest(http.MethodDelete, addr+"/v1/job/"+url.PathEscape(j.ID)+"?purge=true&namespace="+url.QueryEscape(j.Namespace), nil)
		if err != nil {
			continue
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var allocs []struct{ ClientStatus string }
		if getJSON(addr+"/v1/allocations?namespace=*", &allocs) != nil {
			return
		}
		running := 0
		for _, a := range allocs {
			if a.ClientStatus == "running" || a.ClientStatus == "pending" {
				running++
			}
		}
		if running == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
