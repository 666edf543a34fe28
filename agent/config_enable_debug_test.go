package agent

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestParseConfig_EnableDebug(t *testing.T) {
	cases := []struct {
		name     string
		start    *Config
		file, in string
		want     bool
	}{
		{"hcl on", DefaultConfig(), "a.hcl", "enable_debug = true", true},
		{"json on", DefaultConfig(), "a.json", `{"enable_debug": true}`, true},
		{"default off", DefaultConfig(), "a.hcl", `name = "x"`, false},
		{"-dev turns it on", DevConfig(), "a.hcl", `name = "x"`, true},
		// As Nomad merges it: a later file never turns it off.
		{"a file does not turn -dev's off", DevConfig(), "a.hcl", "enable_debug = false", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var warnings []string
			must.NoError(t, ParseConfig(tc.start, tc.file, []byte(tc.in), func(w string) { warnings = append(warnings, w) }))
			must.Eq(t, tc.want, tc.start.EnableDebug)
			must.SliceEmpty(t, warnings, must.Sprint("enable_debug is implemented, not ignored"))
		})
	}
}
