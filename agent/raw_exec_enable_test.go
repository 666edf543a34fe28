package agent

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

// TestRawExec_OffUnlessEnabled: raw_exec runs any command as the agent's
// user, so it is off on an agent the operator did not enable it on, and
// an explicit enabled = false wins even in -dev.
func TestRawExec_OffUnlessEnabled(t *testing.T) {
	cases := []struct {
		name    string
		modify  func(*config.Config)
		enabled bool
	}{
		{"default agent", func(c *config.Config) {
			def := config.Default()
			c.DevMode = false
			c.DataDir = t.TempDir()
			c.Client.Options = def.Client.Options
			c.Plugins = def.Plugins
		}, false},
		{"default agent with the plugin block", func(c *config.Config) {
			c.DevMode = false
			c.DataDir = t.TempDir()
			c.Client.Options = map[string]string{}
			c.Plugins = []*config.Plugin{{Name: "raw_exec", Config: map[string]any{"enabled": true}}}
		}, true},
		{"-dev with enabled = false", func(c *config.Config) {
			c.Plugins = []*config.Plugin{{Name: "raw_exec", Config: map[string]any{"enabled": false}}}
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := NewTestAgent(t, tc.modify)
			c := apiClient(t, a)
			nodes, _, err := c.Nodes().List(nil)
			must.NoError(t, err)
			must.Len(t, 1, nodes)
			node, _, err := c.Nodes().Info(nodes[0].ID, nil)
			must.NoError(t, err)
			d := node.Drivers["raw_exec"]
			must.NotNil(t, d)
			must.Eq(t, tc.enabled, d.Detected, must.Sprint(d.HealthDescription))
			_, attr := node.Attributes["driver.raw_exec"]
			must.Eq(t, tc.enabled, attr)
		})
	}
}
