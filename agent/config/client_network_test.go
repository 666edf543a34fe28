package config

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestParseConfig_ClientPortsAndHostVolumes(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		check   func(t *testing.T, c *Client)
		wantErr string
	}{
		{
			name: "all keys",
			src: `client {
  enabled           = true
  min_dynamic_port  = 21000
  max_dynamic_port  = 21999
  network_interface = "lo"
  host_volume "shared" {
    path      = "/srv/shared"
    read_only = true
  }
  host_volume "scratch" { path = "/srv/scratch" }
}`,
			check: func(t *testing.T, c *Client) {
				must.Eq(t, 21000, c.MinDynamicPort)
				must.Eq(t, 21999, c.MaxDynamicPort)
				must.Eq(t, "lo", c.NetworkInterface)
				must.Eq(t, []*structs.ClientHostVolumeConfig{
					{Name: "shared", Path: "/srv/shared", ReadOnly: true},
					{Name: "scratch", Path: "/srv/scratch"},
				}, c.HostVolumes)
			},
		},
		{
			name:    "range upside down",
			src:     "client {\n enabled = true\n min_dynamic_port = 30000\n max_dynamic_port = 25000\n}",
			wantErr: "client.min_dynamic_port 30000 is not allowed: must not be above max_dynamic_port 25000",
		},
		{
			name:    "port out of range",
			src:     "client {\n enabled = true\n max_dynamic_port = 70000\n}",
			wantErr: "client.max_dynamic_port 70000 is not allowed: must be between 1 and 65535",
		},
		{
			name:    "relative host volume",
			src:     "client {\n enabled = true\n host_volume \"v\" { path = \"srv\" }\n}",
			wantErr: `client.host_volume "v" path "srv" is not allowed: must be absolute`,
		},
		{
			name:    "unknown host volume key",
			src:     "client {\n enabled = true\n host_volume \"v\" {\n path = \"/srv\"\n owner = \"me\"\n }\n}",
			wantErr: `client.host_volume.v.owner`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			cfg.DataDir = t.TempDir()
			err := Parse(cfg, "client.hcl", []byte(tc.src), func(string) {})
			if err == nil {
				err = cfg.Validate()
			}
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			tc.check(t, cfg.Client)
		})
	}
}
