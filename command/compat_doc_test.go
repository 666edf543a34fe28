package command

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// TestCompatCommandsTable keeps website/compat.md's table of Nomad's
// commands in step with the command table: every command nomadq registers
// is listed as supported, and no row claims a command nomadq lacks.
func TestCompatCommandsTable(t *testing.T) {
	raw, err := os.ReadFile("../website/compat.md")
	must.NoError(t, err)
	doc := string(raw)
	start := strings.Index(doc, "\n## Commands\n")
	must.Positive(t, start, must.Sprint("website/compat.md has no \"## Commands\" section"))
	section := doc[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	row := regexp.MustCompile("(?m)^\\| `nomad ([^`]+)` \\| ([^|]+?) \\|")
	status := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		name, st := m[1], m[2]
		_, dup := status[name]
		must.False(t, dup, must.Sprintf("nomad %s is listed twice", name))
		must.SliceContains(t, []string{"yes", "no", "not yet", "nomadq only"}, st, must.Sprintf("nomad %s: unknown status %q", name, st))
		status[name] = st
	}
	must.MapNotEmpty(t, status)

	for name := range commands {
		st, ok := status[name]
		must.True(t, ok, must.Sprintf("nomad %s is registered but not listed in website/compat.md", name))
		must.True(t, st == "yes" || st == "nomadq only", must.Sprintf("nomad %s is registered but listed as %q in website/compat.md", name, st))
	}
	for name, st := range status {
		_, registered := commands[name]
		switch st {
		case "yes", "nomadq only":
			must.True(t, registered || hasSubcommands(name), must.Sprintf("website/compat.md lists nomad %s as %q, but there is no such command", name, st))
		default:
			must.False(t, registered || hasSubcommands(name), must.Sprintf("website/compat.md lists nomad %s as %q, but it is registered", name, st))
		}
	}
}
