package command

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

func TestOperatorAutopilotAndMetrics(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) {
		c.Client.Enabled = false
		c.Telemetry.PrometheusMetrics = true
	})
	addr := a.HTTPAddr()
	// The leader writes the autopilot configuration when it establishes
	// leadership, which may come just after the agent answers; until then
	// the read is refused ("not initialized yet"), as in Nomad.
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, _, errOut := cli(t, addr, "operator", "autopilot", "get-config")
		if code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("autopilot configuration never readable: %s", errOut)
		}
		time.Sleep(50 * time.Millisecond)
	}

	t.Run("set-config changes only the flags given", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "operator", "autopilot", "set-config", "-max-trailing-logs", "321", "-last-contact-threshold", "750ms")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, "Configuration updated!\n", out)
		code, out, errOut = cli(t, addr, "operator", "autopilot", "get-config")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "MaxTrailingLogs = 321\n")
		must.StrContains(t, out, "LastContactThreshold = 750ms\n")
		must.StrContains(t, out, "CleanupDeadServers = true\n")
		code, out, _ = cli(t, addr, "operator", "autopilot", "get-config", "-t", "{{.MaxTrailingLogs}}")
		must.Eq(t, 0, code)
		must.Eq(t, "321\n", out)
	})
	t.Run("set-config refusals", func(t *testing.T) {
		code, _, errOut := cli(t, addr, "operator", "autopilot", "set-config", "-enable-redundancy-zones=true")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "EnableRedundancyZones: redundancy zones are a Nomad Enterprise feature")
		code, _, errOut = cli(t, addr, "operator", "autopilot", "set-config", "-last-contact-threshold", "soon")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, `invalid value "soon" for flag -last-contact-threshold`)
	})
	t.Run("health", func(t *testing.T) {
		waitFor(t, "a healthy cluster", 30*time.Second, func() error {
			code, out, errOut := cli(t, addr, "operator", "autopilot", "health", "-json")
			if code != 0 {
				return &cliErr{out, errOut}
			}
			var h struct {
				Healthy bool
				Servers []struct{ Leader, Voter bool }
			}
			if err := json.Unmarshal([]byte(out), &h); err != nil {
				return err
			}
			if !h.Healthy || len(h.Servers) != 1 || !h.Servers[0].Leader {
				return &cliErr{out, errOut}
			}
			return nil
		})
		code, out, errOut := cli(t, addr, "operator", "autopilot", "health")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "Healthy: true\nFailureTolerance: 0\n")
		must.StrContains(t, out, "ID ")
		must.StrContains(t, out, "StableSince")
	})
	t.Run("metrics", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "operator", "metrics", "-format", "prometheus")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "# TYPE ")
		code, out, errOut = cli(t, addr, "operator", "metrics", "-json")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, `"Gauges"`)
		code, out, errOut = cli(t, addr, "operator", "metrics", "-t", "{{len .Timestamp}}")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrNotContains(t, out, "{{")
		code, out, _ = cli(t, addr, "operator", "metrics")
		must.Eq(t, 0, code)
		must.StrContains(t, out, `"Counters"`)
		code, _, errOut = cli(t, addr, "operator", "metrics", "-format", "yaml")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, `Invalid -format "yaml"`)
	})
}

// cliErr is a command's output, as the error of a check that retries it.
type cliErr struct{ out, errOut string }

func (e *cliErr) Error() string { return "stdout: " + e.out + " stderr: " + e.errOut }
