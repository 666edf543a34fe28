package e2e

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// harnessConfig is the agent config the official api module's test
// harness (api/internal/testutil) writes: the JSON of its
// TestServerConfig, in a file with no extension, started as
// nomad agent -config <file> [-dev]. Written here from that struct's JSON
// tags and defaults, dev mode adding the client option it sets.
func harnessConfig(ports []int, dataDir string, dev bool) string {
	client := `{"enabled":false}`
	if dev {
		client = `{"enabled":false,"options":{"test.tighten_network_timeouts":"true"}}`
	}
	return fmt.Sprintf(`{"name":"node-%d","data_dir":%q,"disable_update_check":true,"log_level":"ERROR",`+
		`"ports":{"http":%d,"rpc":%d,"serf":%d},"server":{"enabled":true,"bootstrap_expect":1},`+
		`"client":%s,"vault":{"enabled":false},"acl":{"enabled":false}}`,
		ports[0], dataDir, ports[0], ports[1], ports[2], client)
}

func TestAgent_APIHarnessJSONConfig(t *testing.T) {
	for _, dev := range []bool{false, true} {
		t.Run(fmt.Sprintf("dev=%v", dev), func(t *testing.T) {
			dir := t.TempDir()
			ports := freePorts(t, 3)
			cfgPath := filepath.Join(dir, "nomad123")
			must.NoError(t, os.WriteFile(cfgPath, []byte(harnessConfig(ports, dir, dev)), 0o600))
			a := &agentProc{name: "harness", config: cfgPath, dataDir: dir, http: fmt.Sprintf("http://127.0.0.1:%d", ports[0])}
			if dev {
				a.flags = []string{"-dev"}
			}
			a.start(t)
			c := a.api(t)
			waitFor(t, 20*time.Second, func() error {
				leader, err := c.Status().Leader()
				if err == nil && leader == "" {
					err = errors.New("no leader yet")
				}
				return err
			})
			if dev {
				// -dev keeps its client although the file says
				// client.enabled = false, as Nomad merges it.
				waitFor(t, 20*time.Second, func() error {
					nodes, _, err := c.Nodes().List(nil)
					if err == nil && (len(nodes) != 1 || nodes[0].Status != "ready") {
						err = fmt.Errorf("nodes: %d", len(nodes))
					}
					return err
				})
			}
			a.kill(syscall.SIGINT)
			must.Eq(t, 0, a.cmd.ProcessState.ExitCode(), must.Sprint(a.output()))
			// Nomad keys nomadq lacks are named in a warning; acl is no
			// longer one of them.
			must.StrContains(t, a.output(), `config key "vault" is not implemented by nomadq and is ignored`)
			must.StrNotContains(t, a.output(), `config key "acl"`)
		})
	}
}

func TestAgent_JSONConfigSyntaxErrorStartsNothing(t *testing.T) {
	dir := t.TempDir()
	ports := freePorts(t, 3)
	dataDir := filepath.Join(dir, "data")
	cfgPath := filepath.Join(dir, "agent.json")
	body := fmt.Sprintf("{\n  \"data_dir\": %q,\n  \"ports\": {\"http\": %d \"rpc\": %d},\n  \"server\": {\"enabled\": true, \"bootstrap_expect\": 1}\n}\n",
		dataDir, ports[0], ports[1])
	must.NoError(t, os.WriteFile(cfgPath, []byte(body), 0o600))

	cmd := exec.Command(nomadBin, "agent", "-config", cfgPath)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	must.True(t, errors.As(err, &exit), must.Sprint(string(out)))
	must.Eq(t, 1, exit.ExitCode())
	must.StrContains(t, string(out), fmt.Sprintf("error parsing %s: %s:3,", cfgPath, cfgPath))
	must.StrContains(t, string(out), "A comma must appear between each property definition")
	must.StrNotContains(t, string(out), "listening")
	_, statErr := os.Stat(dataDir)
	must.True(t, os.IsNotExist(statErr), must.Sprint("data_dir was created"))
	conn, dialErr := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ports[0]))
	if dialErr == nil {
		conn.Close()
	}
	must.Error(t, dialErr)
}
