package command

import (
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// A mistyped command keeps Nomad's output and exit code (the list of
// commands on stderr; 127 at the top level, 1 under a group) and ends
// with a line naming it and the command that was probably meant.
func TestMistypedCommandSuggests(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"jbo", "status"}, 127, `Unknown command "nomad jbo". Did you mean "nomad job"?`},
		{[]string{"job", "stauts"}, 1, `Unknown command "nomad job stauts". Did you mean "nomad job status"?`},
		{[]string{"job", "stat", "example"}, 1, `Unknown command "nomad job stat". Did you mean "nomad job status"?`},
		{[]string{"queue", "relase", "x"}, 1, `Unknown command "nomad queue relase". Did you mean "nomad queue release"?`},
		{[]string{"operator", "raft", "lisst-peers"}, 1, `Unknown command "nomad operator raft lisst-peers". Did you mean "nomad operator raft list-peers"?`},
		{[]string{"help"}, 127, `Unknown command "nomad help". Did you mean "nomad -help"?`},
		{[]string{"xyzzy"}, 127, `Unknown command "nomad xyzzy".`},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := run(t, "", tc.args...)
			must.Eq(t, tc.code, code)
			must.Eq(t, "", out)
			must.StrContains(t, errOut, "Usage: nomad ")
			lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
			must.Eq(t, tc.want, lines[len(lines)-1])
		})
	}
}

// Commands that exist, with or without arguments, and groups asked for
// without a subcommand are not "unknown".
func TestUnknownCommandLeavesKnownCommandsAlone(t *testing.T) {
	for _, args := range [][]string{
		{"job", "status", "stauts"}, {"job"}, {"job", "-h"}, {"-h"}, {}, {"status", "jbo"}, {"operator", "raft"},
	} {
		must.Eq(t, "", unknownCommand(args), must.Sprint(args))
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"jbo", "job", 1}, {"stauts", "status", 1}, {"status", "status", 0}, {"", "job", 3}, {"nodee", "node", 1}, {"alloc", "allocs", 1}, {"run", "stop", 4},
	} {
		must.Eq(t, tc.want, editDistance(tc.a, tc.b), must.Sprint(tc))
	}
	// A short word takes one edit at most: "ab" is nothing.
	must.Eq(t, "", closestCommand([]string{"acl", "job"}, "xy"))
}
