package command

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

func TestTopLevelHelp(t *testing.T) {
	t.Run("-help prints the commands on stdout", func(t *testing.T) {
		for _, flag := range []string{"-h", "-help", "--help"} {
			code, out, _ := run(t, "", flag)
			must.Eq(t, 0, code)
			must.StrHasPrefix(t, "Usage: nomad [-version] [-help] [-autocomplete-(un)install] <command> [args]\n", out)
			must.StrContains(t, out, "\nCommon commands:\n")
			must.StrContains(t, out, "\nOther commands:\n")
			must.RegexMatch(t, regexp.MustCompile(`(?m)^    job +Submit, inspect and change jobs$`), out)
			must.RegexMatch(t, regexp.MustCompile(`(?m)^    queue +Inspect and control the batch job queue$`), out)
			// Aliases of job and alloc subcommands stay out of the list.
			must.False(t, regexp.MustCompile(`(?m)^    validate `).MatchString(out))
		}
	})
	t.Run("no command prints them on stderr", func(t *testing.T) {
		code, out, errOut := run(t, "")
		must.Eq(t, 127, code)
		must.Eq(t, "", out)
		must.StrContains(t, errOut, "Common commands:")
	})
}

func TestVersionFlag(t *testing.T) {
	for _, flag := range []string{"-v", "-version", "--version"} {
		code, out, _ := run(t, "", flag)
		must.Eq(t, 0, code)
		must.Eq(t, "Nomad v"+Version+" (nomadq)\n", out)
	}
}

// Every command's -help is the usage and options its flag set prints,
// on stdout with exit code 0, as in Nomad.
func TestEveryCommandHelp(t *testing.T) {
	for name, info := range commands {
		t.Run(name, func(t *testing.T) {
			help, sets := describe(info.run, nil)
			if name != "version" {
				must.SliceNotEmpty(t, sets, must.Sprint("the command builds no flag set with newFlagSet"))
				must.StrHasPrefix(t, "Usage:", help)
				must.StrContains(t, help, "\nOptions:")
			}
			code, out, errOut := run(t, "", append(strings.Fields(name), "-help")...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.StrHasPrefix(t, "Usage:", out)
			if name != "version" {
				must.Eq(t, help+"\n", out)
			}
		})
	}
}

// Every path that only groups commands has a synopsis, and every
// synopsis names such a path.
func TestGroupSynopses(t *testing.T) {
	groups := map[string]bool{}
	for name := range commands {
		for p := parentPath(name); p != ""; p = parentPath(p) {
			if _, ok := commands[p]; !ok {
				groups[p] = true
			}
		}
	}
	var missing, stale []string
	for g := range groups {
		if groupSynopses[g] == "" {
			missing = append(missing, g)
		}
	}
	for g := range groupSynopses {
		if !groups[g] {
			stale = append(stale, g)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	must.SliceEmpty(t, missing, must.Sprintf("groups without a synopsis: %v", missing))
	must.SliceEmpty(t, stale, must.Sprintf("synopses of no group: %v", stale))
}

// A help flag in the remote command of exec is the remote command's:
// the run reaches the server instead of printing help.
func TestExecHelpFlagBelongsToRemoteCommand(t *testing.T) {
	for _, path := range [][]string{{"alloc", "exec"}, {"exec"}} {
		args := append(append([]string{}, path...), "-address", "http://127.0.0.1:1", "-task", "web", "abcd", "df", "-h")
		code, out, errOut := run(t, "", args...)
		must.Eq(t, 1, code)
		must.StrNotContains(t, out, "Usage:")
		must.StrContains(t, errOut, "Error querying allocation")
	}
	// Before the allocation, -help is still a help request.
	code, out, _ := run(t, "", "alloc", "exec", "-help")
	must.Eq(t, 0, code)
	must.StrHasPrefix(t, "Usage: nomad alloc exec", out)
}

func TestFlagsBeforeTheCommand(t *testing.T) {
	code, _, errOut := run(t, "", "-address=http://127.0.0.1:1", "status")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Invalid flags before the subcommand")
}
