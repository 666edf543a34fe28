package command

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

func TestOperatorDebug(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) { c.EnableDebug = true })
	addr := a.HTTPAddr()
	nodeID := a.Client().NodeID()

	t.Run("a bundle directory in Nomad's layout", func(t *testing.T) {
		out := t.TempDir()
		code, stdout, errOut := cli(t, addr, "operator", "debug", "-duration", "2s", "-interval", "1s",
			"-pprof-interval", "1s", "-event-topic", "Node", "-output", out)
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, stdout, "Starting debugger...")
		must.StrContains(t, stdout, "Capturing cluster data...")
		must.StrContains(t, stdout, "    Capture interval 0001")
		must.StrContains(t, stdout, "    Capture pprofInterval 0000")
		m := regexp.MustCompile(`Created debug directory: (\S+)`).FindStringSubmatch(stdout)
		must.SliceLen(t, 2, m)
		dir := m[1]
		servers, err := filepath.Glob(filepath.Join(dir, "server", "*"))
		must.NoError(t, err)
		must.SliceLen(t, 1, servers)
		server := filepath.Base(servers[0])
		for _, f := range []string{
			"index.json", "cluster/agent-self.json", "cluster/members.json", "cluster/leader.json",
			"cluster/nodes.json", "cluster/namespaces.json", "cluster/regions.json", "cluster/cli-flags.json",
			"cluster/eventstream.json",
			"interval/0000/jobs.json", "interval/0000/allocations.json", "interval/0000/evaluations.json",
			"interval/0000/metrics.json", "interval/0000/operator-raft.json", "interval/0000/operator-autopilot-health.json",
			"interval/0001/nodes.json",
			"server/" + server + "/monitor.log", "server/" + server + "/agent-host.json",
			"server/" + server + "/profile_0000.prof", "server/" + server + "/heap_0000.prof",
			"server/" + server + "/goroutine-debug2_0000.txt", "server/" + server + "/trace_0000.prof",
			"client/" + nodeID + "/monitor.log", "client/" + nodeID + "/agent-host.json",
			"client/" + nodeID + "/goroutine_0000.prof",
		} {
			st, err := os.Stat(filepath.Join(dir, f))
			must.NoError(t, err, must.Sprint(f))
			must.Positive(t, st.Size(), must.Sprint(f))
		}
		var index []string
		raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
		must.NoError(t, err)
		must.NoError(t, json.Unmarshal(raw, &index))
		must.SliceContains(t, index, "cluster/agent-self.json")
	})

	t.Run("an archive in the current directory", func(t *testing.T) {
		t.Chdir(t.TempDir())
		code, stdout, errOut := cli(t, addr, "operator", "debug", "-duration", "1s", "-interval", "1s", "-server-id", "", "-node-id", nodeID[:8])
		must.Eq(t, 0, code, must.Sprint(errOut))
		m := regexp.MustCompile(`Created debug archive: (\S+)`).FindStringSubmatch(stdout)
		must.SliceLen(t, 2, m)
		f, err := os.Open(m[1])
		must.NoError(t, err)
		defer f.Close()
		gz, err := gzip.NewReader(f)
		must.NoError(t, err)
		tr := tar.NewReader(gz)
		names := map[string]bool{}
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			must.NoError(t, err)
			names[h.Name] = true
		}
		stamped := m[1][:len(m[1])-len(".tar.gz")]
		must.True(t, names[stamped+"/client/"+nodeID+"/monitor.log"], must.Sprint(names))
		must.False(t, names[stamped+"/server"], must.Sprint("-server-id \"\" captures no server"))
	})

	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"consul", []string{"-consul-token", "x"}, "-consul-token is not supported: nomadq has no Consul or Vault integration"},
		{"log lookback", []string{"-log-lookback", "1h"}, "-log-lookback is not supported"},
		{"another server", []string{"-server-id", "elsewhere"}, `-server-id "elsewhere" is not this agent's server`},
		{"another node", []string{"-node-id", "ffffffff"}, `-node-id "ffffffff" is not this agent's node`},
		{"bad duration", []string{"-duration", "soon"}, `Error parsing -duration: "soon" is not a positive duration`},
		{"interval over duration", []string{"-duration", "1s", "-interval", "2s"}, "-interval: must be no longer than -duration"},
		{"bad log level", []string{"-log-level", "LOUD"}, `Invalid -log-level "LOUD"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := cli(t, addr, append([]string{"operator", "debug"}, tc.args...)...)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, tc.wantErr)
		})
	}
}
