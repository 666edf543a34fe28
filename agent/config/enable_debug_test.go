package config

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
		{"hcl on", Default(), "a.hcl", "enable_debug = true", true},
		{"json on", Default(), "a.json", `{"enable_debug": true}`, true},
		{"default off", Default(), "a.hcl", `name = "x"`, false},
		{"-dev turns it on", Dev(), "a.hcl", `name = "x"`, true},
		// As Nomad merges it: a later file never turns it off.
		{"a file does not turn -dev's off", Dev(), "a.hcl", "enable_debug = false", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var warnings []string
			must.NoError(t, Parse(tc.start, tc.file, []byte(tc.in), func(w string) { warnings = append(warnings, w) }))
			must.Eq(t, tc.want, tc.start.EnableDebug)
			must.SliceEmpty(t, warnings, must.Sprint("enable_debug is implemented, not ignored"))
		})
	}
}
