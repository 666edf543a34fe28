package jobspec

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestJobBody covers what jobBody adds to gohcl beyond the testdata files:
// map fields written several times, free-form blocks deep in the api
// structs, and errors that name a map entry.
func TestJobBody(t *testing.T) {
	parse := func(src string) (*api.Job, error) {
		return ParseWithConfig(&ParseConfig{Path: "inline.hcl", Body: []byte(src), Strict: true})
	}

	t.Run("meta argument and blocks merge", func(t *testing.T) {
		job, err := parse(`job "j" {
  meta = { a = 1, b = "arg" }
  meta { b = "block" }
  meta { c = "3" }
}`)
		must.NoError(t, err)
		must.Eq(t, map[string]string{"a": "1", "b": "block", "c": "3"}, job.Meta)
	})

	t.Run("free-form blocks below service and scaling", func(t *testing.T) {
		job, err := parse(`job "j" {
  group "g" {
    scaling {
      max = 3
      policy {
        cooldown = "1m"
        check "cpu" {
          source = "prometheus"
        }
      }
    }
    service {
      connect {
        sidecar_service {
          proxy {
            config { protocol = "http" }
            upstreams {
              destination_name = "db"
              config = { connect_timeout_ms = 100 }
            }
          }
        }
        sidecar_task {
          config { image = "envoy" }
        }
      }
    }
  }
}`)
		must.NoError(t, err)
		tg := job.TaskGroups[0]
		must.Eq(t, map[string]any{
			"cooldown": "1m",
			"check":    []map[string]any{{"cpu": map[string]any{"source": "prometheus"}}},
		}, tg.Scaling.Policy)
		// The type Nomad's parser writes for a group's scaling block.
		must.Eq(t, "horizontal", tg.Scaling.Type)
		connect := tg.Services[0].Connect
		proxy := connect.SidecarService.Proxy
		must.Eq(t, map[string]any{"protocol": "http"}, proxy.Config)
		must.Eq(t, map[string]any{"connect_timeout_ms": 100}, proxy.Upstreams[0].Config)
		must.Eq(t, map[string]any{"image": "envoy"}, connect.SidecarTask.Config)
	})

	t.Run("map entry errors name the entry", func(t *testing.T) {
		_, err := parse(`job "j" {
  meta { a = [1] }
}`)
		must.EqError(t, err, "inline.hcl:2,14-17: Unsuitable value type; a: string required, but have tuple")
	})
}
