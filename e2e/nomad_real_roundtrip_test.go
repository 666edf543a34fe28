package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// realNomad returns the path of a real Nomad binary given in NOMAD_REAL,
// or skips t: the round trip through real Nomad runs in make e2e-long
// when one is given (see website/migration.md).
func realNomad(t *testing.T) string {
	t.Helper()
	longTests(t)
	bin := os.Getenv("NOMAD_REAL")
	if bin == "" {
		t.Skip("round trip through real Nomad: set NOMAD_REAL=<path to a nomad binary> (with NOMADQ_E2E_LONG=1, make e2e-long)")
	}
	abs, err := filepath.Abs(bin)
	must.NoError(t, err)
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("NOMAD_REAL=%s: %v", bin, err)
	}
	return abs
}

// startRealNomad starts a one-server real Nomad agent (no client, ACLs
// off) on free loopback ports with Raft in a temporary data dir, and
// returns its HTTP address once it has a leader. The test's cleanup
// kills it.
func startRealNomad(t *testing.T, bin string) string {
	t.Helper()
	p := freePorts(t, 3)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`name = "real"
data_dir = %q
bind_addr = "127.0.0.1"
log_level = "INFO"
ports {
  http = %d
  rpc = %d
  serf = %d
}
advertise {
  http = "127.0.0.1"
  rpc = "127.0.0.1"
  serf = "127.0.0.1"
}
server {
  enabled = true
  bootstrap_expect = 1
}
`, filepath.Join(dir, "data"), p[0], p[1], p[2])
	cfgPath := filepath.Join(dir, "real.hcl")
	must.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))
	logPath := filepath.Join(dir, "real.log")
	logFile, err := os.Create(logPath)
	must.NoError(t, err)
	cmd := exec.Command(bin, "agent", "-config", cfgPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("log of the real Nomad agent:\n%s", b)
		}
	})
	addr := fmt.Sprintf("http://127.0.0.1:%d", p[0])
	waitFor(t, 60*time.Second, func() error {
		select {
		case <-exited:
			return fmt.Errorf("real Nomad exited at start (its log follows)")
		default:
		}
		resp, err := http.Get(addr + "/v1/status/leader")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var leader string
		if err := json.NewDecoder(resp.Body).Decode(&leader); err != nil || leader == "" {
			return fmt.Errorf("no leader yet (%v)", err)
		}
		return nil
	})
	return addr
}

// cli runs `bin args...` and fails t unless it exits 0.
func cli(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}

func apiClient(t *testing.T, addr string) *api.Client {
	t.Helper()
	cfg := api.DefaultConfig()
	cfg.Address = addr
	c, err := api.NewClient(cfg)
	must.NoError(t, err)
	return c
}

// roundTripState is what the round trip must keep.
type roundTripState struct {
	namespace *api.Namespace
	jobs      map[string]*api.Job // by ID, namespace research
	variable  map[string]string
}

const (
	rtNamespace = "research"
	rtVarPath   = "nomad/jobs/rt-batch"
)

func roundTripJobs() []*api.Job {
	ns := rtNamespace
	batch := batchJob("rt-batch", "echo ran")
	batch.Namespace = &ns
	batch.TaskGroups[0].MaxRunDuration = new(45 * time.Minute)

	periodic := batchJob("rt-nightly", "echo nightly")
	periodic.Namespace = &ns
	periodic.Periodic = &api.PeriodicConfig{
		Specs:           []string{"0 3 * * *"},
		TimeZone:        new("UTC"),
		ProhibitOverlap: new(true),
	}

	param := batchJob("rt-render", "echo $NOMAD_META_scene")
	param.Namespace = &ns
	param.ParameterizedJob = &api.ParameterizedJobConfig{
		Payload:      "optional",
		MetaRequired: []string{"scene"},
		MetaOptional: []string{"frames"},
	}
	return []*api.Job{batch, periodic, param}
}

// readRoundTripState reads the namespace, jobs and variable from the
// agent at addr, retrying until all are there.
func readRoundTripState(t *testing.T, addr string) roundTripState {
	t.Helper()
	c := apiClient(t, addr)
	q := &api.QueryOptions{Namespace: rtNamespace}
	var st roundTripState
	waitFor(t, 60*time.Second, func() error {
		ns, _, err := c.Namespaces().Info(rtNamespace, nil)
		if err != nil {
			return fmt.Errorf("namespace: %w", err)
		}
		jobs := map[string]*api.Job{}
		for _, j := range roundTripJobs() {
			got, _, err := c.Jobs().Info(*j.ID, q)
			if err != nil {
				return fmt.Errorf("job %s: %w", *j.ID, err)
			}
			jobs[*j.ID] = got
		}
		v, _, err := c.Variables().Read(rtVarPath, q)
		if err != nil {
			return fmt.Errorf("variable %s: %w", rtVarPath, err)
		}
		st = roundTripState{namespace: ns, jobs: jobs, variable: v.Items}
		return nil
	})
	return st
}

// checkRoundTripState asserts what a user would check after a migration:
// the namespace with its description and meta, each job's type, group
// max_run_duration, periodic and parameterized blocks, the variable's
// items.
func checkRoundTripState(t *testing.T, where string, st roundTripState) {
	t.Helper()
	must.Eq(t, "Research team workloads", st.namespace.Description, must.Sprintf("%s: namespace description", where))
	must.Eq(t, map[string]string{"owner": "ml-lab"}, st.namespace.Meta, must.Sprintf("%s: namespace meta", where))

	batch := st.jobs["rt-batch"]
	must.Eq(t, "batch", *batch.Type, must.Sprintf("%s: rt-batch type", where))
	must.NotNil(t, batch.TaskGroups[0].MaxRunDuration, must.Sprintf("%s: rt-batch max_run_duration", where))
	must.Eq(t, 45*time.Minute, *batch.TaskGroups[0].MaxRunDuration, must.Sprintf("%s: rt-batch max_run_duration", where))

	periodic := st.jobs["rt-nightly"]
	must.NotNil(t, periodic.Periodic, must.Sprintf("%s: rt-nightly periodic", where))
	must.Eq(t, []string{"0 3 * * *"}, periodic.Periodic.Specs, must.Sprintf("%s: rt-nightly crons", where))
	must.True(t, *periodic.Periodic.ProhibitOverlap, must.Sprintf("%s: rt-nightly prohibit_overlap", where))

	param := st.jobs["rt-render"]
	must.NotNil(t, param.ParameterizedJob, must.Sprintf("%s: rt-render parameterized", where))
	must.Eq(t, []string{"scene"}, param.ParameterizedJob.MetaRequired, must.Sprintf("%s: rt-render meta_required", where))
	must.Eq(t, "optional", param.ParameterizedJob.Payload, must.Sprintf("%s: rt-render payload", where))

	must.Eq(t, map[string]string{"user": "alice", "password": "s3cret"}, st.variable, must.Sprintf("%s: variable items", where))
}

// inspectStats runs the real CLI's `operator snapshot inspect -json` on
// path and returns the record count per type name.
func inspectStats(t *testing.T, bin, path string) map[string]int {
	t.Helper()
	out := cli(t, bin, "operator", "snapshot", "inspect", "-json", path)
	var res struct {
		Stats []struct {
			Name  string
			Count int
		}
	}
	must.NoError(t, json.Unmarshal([]byte(out), &res), must.Sprintf("inspect -json output:\n%s", out))
	counts := map[string]int{}
	for _, s := range res.Stats {
		counts[s.Name] = s.Count
	}
	return counts
}

// TestNomadReal_SnapshotRoundTrip carries a namespace, three jobs and a
// variable through real Nomad: our save, Nomad's restore, Nomad's save,
// our restore into a fresh server.
func TestNomadReal_SnapshotRoundTrip(t *testing.T) {
	realBin := realNomad(t)
	dir := t.TempDir()

	// 1. Our cluster: a server and client, the state to carry.
	p := freePorts(t, 3)
	ours := startAgent(t, agentSpec{
		name: "ours", server: true, expect: 1, client: true,
		dataDir: filepath.Join(dir, "ours"), http: p[0], rpc: p[1], serf: p[2],
	})
	c := ours.api(t)
	_, err := c.Namespaces().Register(&api.Namespace{
		Name:        rtNamespace,
		Description: "Research team workloads",
		Meta:        map[string]string{"owner": "ml-lab"},
	}, nil)
	must.NoError(t, err)
	for _, j := range roundTripJobs() {
		_, _, err := c.Jobs().Register(j, nil)
		must.NoError(t, err, must.Sprintf("register %s", *j.ID))
	}
	w := &api.WriteOptions{Namespace: rtNamespace}
	waitFor(t, 30*time.Second, func() error {
		_, _, err := c.Variables().Create(&api.Variable{
			Namespace: rtNamespace, Path: rtVarPath,
			Items: map[string]string{"user": "alice", "password": "s3cret"},
		}, w)
		return err
	})
	// The batch job runs, so that an allocation travels too.
	waitFor(t, 60*time.Second, func() error {
		allocs, _, err := c.Jobs().Allocations("rt-batch", false, &api.QueryOptions{Namespace: rtNamespace})
		if err != nil {
			return err
		}
		if len(allocs) != 1 || allocs[0].ClientStatus != "complete" {
			return fmt.Errorf("rt-batch allocations not complete yet: %d", len(allocs))
		}
		return nil
	})
	checkRoundTripState(t, "ours before", readRoundTripState(t, ours.http))

	// 2. Our save; the real CLI reads our file and counts its records.
	ourSnap := filepath.Join(dir, "ours.snap")
	cli(t, nomadBin, "operator", "snapshot", "save", "-address", ours.http, ourSnap)
	counts := inspectStats(t, realBin, ourSnap)
	must.Eq(t, 3, counts["Job"], must.Sprintf("real inspect of our snapshot: %v", counts))
	must.Eq(t, 2, counts["Namespace"], must.Sprintf("real inspect of our snapshot: %v", counts))
	must.Eq(t, 1, counts["Variables"], must.Sprintf("real inspect of our snapshot: %v", counts))
	must.Positive(t, counts["WrappedRootKeys"], must.Sprintf("real inspect of our snapshot: %v", counts))

	// 3. Real Nomad restores it and serves the same state, the variable
	// decrypted with the root key our snapshot carried.
	realAddr := startRealNomad(t, realBin)
	cli(t, realBin, "operator", "snapshot", "restore", "-address", realAddr, ourSnap)
	checkRoundTripState(t, "real Nomad after restore", readRoundTripState(t, realAddr))

	// 4. Real Nomad's save, restored into a fresh server of ours.
	realSnap := filepath.Join(dir, "real.snap")
	cli(t, realBin, "operator", "snapshot", "save", "-address", realAddr, realSnap)
	p2 := freePorts(t, 3)
	fresh := startAgent(t, agentSpec{
		name: "fresh", server: true, expect: 1,
		dataDir: filepath.Join(dir, "fresh"), http: p2[0], rpc: p2[1], serf: p2[2],
	})
	waitFor(t, 30*time.Second, func() error {
		leader, err := fresh.api(t).Status().Leader()
		if err != nil || leader == "" {
			return fmt.Errorf("no leader yet (%v)", err)
		}
		return nil
	})
	cli(t, nomadBin, "operator", "snapshot", "restore", "-address", fresh.http, realSnap)
	checkRoundTripState(t, "ours after the round trip", readRoundTripState(t, fresh.http))
}
