package docker

import (
	"errors"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/client/drivers"
)

func TestCheckJoinedNetwork(t *testing.T) {
	joined := &drivers.TaskConfig{Network: &drivers.NetworkIsolation{Path: "/var/run/netns/a"}, Env: map[string]string{"NOMAD_HOST_PORT_http": "23000"}}
	host := &drivers.TaskConfig{Env: map[string]string{"NOMAD_HOST_PORT_http": "23000", "NOMAD_PORT_http": "80", "NOMAD_HOST_PORT_db": "23001", "NOMAD_PORT_db": "23001"}}
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
		{"ports on docker's bridge", host, map[string]any{"ports": []any{"http"}}, ""},
		{"ports on an explicit bridge", joined, map[string]any{"ports": []any{"http"}, "network_mode": "bridge"}, ""},
		{"undeclared port on docker's bridge", host, map[string]any{"ports": []any{"admin"}}, `config key "ports": port label "admin" is not declared in the group's network`},
		{"host network, no to", host, map[string]any{"ports": []any{"db"}, "network_mode": "host"}, ""},
		{"host network maps nothing", host, map[string]any{"ports": []any{"http"}, "network_mode": "host"}, `port label "http" maps host port 23000 to 80, but network_mode = "host" maps no ports`},
		{"ports with no network", joined, map[string]any{"ports": []any{"http"}, "network_mode": "none"}, `config key "ports": cannot be set with network_mode = "none"`},
		{"ports on another container's network", host, map[string]any{"ports": []any{"http"}, "network_mode": "container:db"}, `config key "ports": cannot be set with network_mode = "container:db"`},
		{"hostname on another container's network", host, map[string]any{"hostname": "web", "network_mode": "container:db"}, `config key "hostname": cannot be set on network_mode = "container:db"`},
		{"dns on another container's network", host, map[string]any{"dns_servers": []any{"10.0.0.1"}, "network_mode": "container:db"}, `config key "dns_servers": cannot be set on network_mode`},
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
