package structs

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/shoenig/test/must"
)

// A node encoded for the API, alone or inside another value (an event
// payload), shows an empty SecretID and the Drain flag, as Nomad's does.
func TestNodeJSON(t *testing.T) {
	draining := &Node{ID: "n1", SecretID: "hush", Name: "a", DrainStrategy: &DrainStrategy{DrainSpec: DrainSpec{Deadline: time.Minute}}}
	idle := &Node{ID: "n2", SecretID: "hush", Name: "b"}
	cases := []struct {
		name  string
		value any
		path  func(map[string]any) map[string]any
		drain bool
	}{
		{"draining node", draining, func(m map[string]any) map[string]any { return m }, true},
		{"idle node", idle, func(m map[string]any) map[string]any { return m }, false},
		{"node inside a payload", map[string]any{"Node": draining}, func(m map[string]any) map[string]any { return m["Node"].(map[string]any) }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			must.NoError(t, codec.NewEncoder(&buf, JsonHandle).Encode(c.value))
			var m map[string]any
			must.NoError(t, json.Unmarshal(buf.Bytes(), &m))
			n := c.path(m)
			must.Eq[any](t, "", n["SecretID"])
			must.Eq[any](t, c.drain, n["Drain"])
			must.NotNil(t, n["ID"])
			if c.drain {
				must.Eq[any](t, float64(time.Minute), n["DrainStrategy"].(map[string]any)["Deadline"])
			}
		})
	}
	must.Eq(t, "hush", draining.SecretID, must.Sprint("encoding does not change the node"))
}
