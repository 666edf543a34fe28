package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// netLab is a bridge on this machine with one network namespace per
// agent behind it, each on its own address, so a test can cut one agent
// off from the others with iptables rules inside its namespace while the
// test itself (on the bridge's address) still reaches every agent.
// Traffic never leaves the machine.
type netLab struct {
	t      *testing.T
	bridge string
	subnet string // "10.X.0"
	ns     []string
}

// newNetLab makes n namespaces behind a new bridge and removes them all
// when the test ends. It skips the test without root or the ip tool.
func newNetLab(t *testing.T, n int) *netLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	for _, tool := range []string{"ip", "iptables"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("network namespaces need %s: %v", tool, err)
		}
	}
	id := os.Getpid() % 10000
	lab := &netLab{t: t, bridge: fmt.Sprintf("nq%dbr", id), subnet: fmt.Sprintf("10.%d.%d", 100+id%100, id/100%250)}
	t.Cleanup(func() {
		for _, ns := range lab.ns {
			_ = exec.Command("ip", "netns", "del", ns).Run()
		}
		_ = exec.Command("ip", "link", "del", lab.bridge).Run()
	})
	lab.run("ip", "link", "add", lab.bridge, "type", "bridge")
	lab.run("ip", "addr", "add", lab.subnet+".254/24", "dev", lab.bridge)
	lab.run("ip", "link", "set", lab.bridge, "up")
	for i := range n {
		ns := fmt.Sprintf("nomadq-e2e-%d-%d", id, i)
		host, peer := fmt.Sprintf("nq%dh%d", id, i), fmt.Sprintf("nq%dn%d", id, i)
		lab.run("ip", "netns", "add", ns)
		lab.ns = append(lab.ns, ns)
		lab.run("ip", "link", "add", host, "type", "veth", "peer", "name", peer)
		lab.run("ip", "link", "set", peer, "netns", ns)
		lab.run("ip", "link", "set", host, "master", lab.bridge, "up")
		lab.run("ip", "-n", ns, "addr", "add", lab.addr(i)+"/24", "dev", peer)
		lab.run("ip", "-n", ns, "link", "set", peer, "up")
		lab.run("ip", "-n", ns, "link", "set", "lo", "up")
	}
	return lab
}

func (l *netLab) addr(i int) string { return fmt.Sprintf("%s.%d", l.subnet, i+1) }

func (l *netLab) run(name string, args ...string) {
	l.t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	must.NoError(l.t, err, must.Sprintf("%s %s: %s", name, strings.Join(args, " "), out))
}

// isolate drops, inside namespace i, every packet to or from the other
// agents; the bridge's address (the test) still gets through.
func (l *netLab) isolate(i int) {
	ns := l.ns[i]
	for _, rule := range [][]string{
		{"-A", "INPUT", "-s", l.subnet + ".254", "-j", "ACCEPT"},
		{"-A", "INPUT", "-s", l.subnet + ".0/24", "-j", "DROP"},
		{"-A", "OUTPUT", "-d", l.subnet + ".254", "-j", "ACCEPT"},
		{"-A", "OUTPUT", "-d", l.subnet + ".0/24", "-j", "DROP"},
	} {
		l.run("ip", append([]string{"netns", "exec", ns, "iptables"}, rule...)...)
	}
}

// heal removes namespace i's rules.
func (l *netLab) heal(i int) {
	l.run("ip", "netns", "exec", l.ns[i], "iptables", "-F")
}

// The leader of three servers is cut off from the other two. It stops
// accepting writes within the Raft timeouts (a write sent to it as the
// cut begins fails and is never applied), the other two elect a leader
// and take writes, and when the cut heals the old leader rejoins as a
// follower: every server then has the writes acknowledged before the
// cut and by the majority, and none has the one the old leader took in
// alone.
func TestPartition_LeaderCutOffFromMajority(t *testing.T) {
	longTests(t)
	lab := newNetLab(t, 3)
	var join []string
	for i := range 3 {
		join = append(join, lab.addr(i)+":4648")
	}
	var servers []*agentProc
	for i := range 3 {
		servers = append(servers, startAgent(t, agentSpec{
			name: fmt.Sprintf("server-%d", i), server: true, expect: 3, join: join, dataDir: t.TempDir(),
			addr: lab.addr(i), netns: lab.ns[i], http: 4646, rpc: 4647, serf: 4648,
		}))
	}
	leader := waitLeader(t, servers)
	idx := slices.Index(servers, leader)
	t.Logf("leader is %s", leader.name)
	_, _, err := leader.api(t).Jobs().Register(batchJob("before-cut", "true"), nil)
	must.NoError(t, err)

	cut := time.Now()
	lab.isolate(idx)
	// A write to the old leader as the cut begins: it may reach its log
	// but can never commit.
	minority := make(chan error, 1)
	go func() {
		cfg := api.DefaultConfig()
		cfg.Address = leader.http
		cfg.HttpClient = &http.Client{Timeout: 60 * time.Second}
		c, err := api.NewClient(cfg)
		if err == nil {
			_, _, err = c.Jobs().Register(batchJob("minority-write", "true"), nil)
		}
		minority <- err
	}()
	select {
	case err := <-minority:
		must.Error(t, err, must.Sprint("the cut-off leader acknowledged a write"))
		// Raft's default leader lease is 500 ms; 10 s is a generous ceiling.
		must.Less(t, 10*time.Second, time.Since(cut), must.Sprint("the cut-off leader took too long to refuse"))
		t.Logf("the cut-off leader refused the write %s after the cut: %v", time.Since(cut).Round(time.Millisecond), err)
	case <-time.After(30 * time.Second):
		t.Fatal("the cut-off leader neither acknowledged nor refused a write within 30s")
	}
	// It no longer takes writes at all.
	_, _, err = leader.api(t).Jobs().Register(batchJob("minority-later", "true"), nil)
	must.Error(t, err, must.Sprint("the cut-off leader acknowledged a later write"))

	majority := slices.Delete(slices.Clone(servers), idx, idx+1)
	newLeader := waitLeader(t, majority)
	t.Logf("majority elected %s %s after the cut", newLeader.name, time.Since(cut).Round(time.Millisecond))
	_, _, err = newLeader.api(t).Jobs().Register(batchJob("majority-write", "true"), nil)
	must.NoError(t, err)

	lab.heal(idx)
	waitLeader(t, servers)
	for _, s := range servers {
		c := s.api(t)
		stale := &api.QueryOptions{AllowStale: true}
		waitFor(t, 60*time.Second, func() error {
			for _, id := range []string{"before-cut", "majority-write"} {
				if _, _, err := c.Jobs().Info(id, stale); err != nil {
					return fmt.Errorf("%s lacks %s: %w", s.name, id, err)
				}
			}
			return nil
		})
		for _, id := range []string{"minority-write", "minority-later"} {
			_, _, err := c.Jobs().Info(id, stale)
			must.Error(t, err, must.Sprintf("%s has %s, a write only the cut-off leader took", s.name, id))
			must.StrContains(t, err.Error(), "404")
		}
	}
}
