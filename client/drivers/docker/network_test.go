package docker

import (
	"errors"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/client/drivers"
)

func TestCheckJoinedNetwork(t *testing.T) {
	joined := &drivers.TaskConfig{Network: &drivers.NetworkIsolation{Path: "/var/run/netns/a"}, Env: map[string]string{"NOMAD_HOST_PORT_http": "23000"}}
	host := &drivers.TaskConfig{Env: map[string]string{"NOMAD_HOST_PORT_http": "23000"}}
	parse := func(m map[string]any) taskConfig {
		m["image"] = "busybox:1"
		c, err := parseTask(m, DefaultPluginConfig())
		must.NoError(t, err)
		return c
	}
	for _, tc := range []struct {
		name string
		tc   *drivers.TaskConfig
		cfg  map[string]any
		want string
	}{
		{"ports of the group's network", joined, map[string]any{"ports": []any{"http"}}, ""},
		{"own network mode keeps its hostname", joined, map[string]any{"network_mode": "none", "hostname": "x"}, ""},
		{"undeclared port", joined, map[string]any{"ports": []any{"admin"}}, `config key "ports": port label "admin" is not declared in the group's network`},
		{"ports without the group's network", host, map[string]any{"ports": []any{"http"}}, `config key "ports": publishing ports through docker's own networking is not supported by nomadq yet`},
		{"ports with an own network mode", joined, map[string]any{"ports": []any{"http"}, "network_mode": "none"}, `config key "ports": publishing ports`},
		{"hostname", joined, map[string]any{"hostname": "web"}, `config key "hostname": cannot be set on a task that joins the group's network`},
		{"dns", joined, map[string]any{"dns_servers": []any{"10.0.0.1"}}, `config key "dns_servers": cannot be set`},
		{"extra hosts", joined, map[string]any{"extra_hosts": []any{"db:10.0.0.2"}}, `config key "extra_hosts": cannot be set`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkJoinedNetwork(tc.tc, parse(tc.cfg))
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.want)
			var ve *drivers.ValidationError
			must.True(t, errors.As(err, &ve), must.Sprint("a validation error fails the task without retries"))
		})
	}
}
