package command

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/agenttest"
)

// shell runs the test binary as the nomad binary with the extra
// environment, as a shell would, and returns its exit code and stdout.
func shell(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runAsCLI+"=1")
	cmd.Env = append(cmd.Env, env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		must.NoError(t, err)
	}
	if errOut.Len() > 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	return code, out.String()
}

// completeLine asks the CLI for the completions of line with the cursor
// at its end, as bash's complete -C does, against the agent at addr
// (none when empty), and returns them sorted.
func completeLine(t *testing.T, addr, line string) []string {
	t.Helper()
	if addr == "" {
		addr = "http://127.0.0.1:1"
	}
	code, out := shell(t, []string{
		"COMP_LINE=" + line,
		"COMP_POINT=" + strconv.Itoa(len(line)),
		"NOMAD_ADDR=" + addr,
	})
	must.Eq(t, 0, code)
	got := strings.Fields(out)
	if len(got) == 0 {
		return nil
	}
	sort.Strings(got)
	return got
}

func TestCompleteCommands(t *testing.T) {
	cases := []struct {
		line string
		want []string
	}{
		{"nomad job r", []string{"restart", "revert", "run"}},
		{"nomad jo", []string{"job"}},
		{"nomad node pool ", []string{"apply", "delete", "info", "jobs", "list", "nodes"}},
		{"nomad node pool i", []string{"info"}},
		{"nomad operator gossip keyring u", []string{"use"}},
		{"nomad queue ", []string{"hold", "jobs", "priority", "release", "status", "top", "usage"}},
		{"nomad alloc s", []string{"signal", "status", "stop"}},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			must.Eq(t, tc.want, completeLine(t, "", tc.line))
		})
	}
	// The cursor, not the end of the line, marks the word.
	t.Run("cursor inside the line", func(t *testing.T) {
		line := "nomad job r -detach"
		code, out := shell(t, []string{"COMP_LINE=" + line, "COMP_POINT=11", "NOMAD_ADDR=http://127.0.0.1:1"})
		must.Eq(t, 0, code)
		got := strings.Fields(out)
		sort.Strings(got)
		must.Eq(t, []string{"restart", "revert", "run"}, got)
	})
}

// TestCompleteEveryCommandAndFlag: every command completes under its
// group, one shell run per group ("nomad job " lists run, status, ...),
// and every command offers every flag its flag set defines, checked in
// process on the predictor the CLI hands posener/complete (running the
// race-built binary twice per command took minutes; TestCompleteFlagValues
// and TestCompleteCommands run flag lines end to end).
func TestCompleteEveryCommandAndFlag(t *testing.T) {
	groups := map[string][]string{}
	for name := range commands {
		parent := parentPath(name)
		groups[parent] = append(groups[parent], name[strings.LastIndex(name, " ")+1:])
	}
	for parent, words := range groups {
		line := strings.TrimSpace("nomad "+parent) + " "
		got := completeLine(t, "", line)
		for _, w := range words {
			must.SliceContains(t, got, w, must.Sprintf("%q", line))
		}
	}
	for name, info := range commands {
		_, sets := describe(info.run, nil)
		var want []string
		for _, fs := range sets {
			for _, f := range flagNames(fs) {
				want = append(want, "-"+f)
			}
		}
		sort.Strings(want)
		var got []string
		for f := range (&leafCommand{name: name, info: info}).AutocompleteFlags() {
			got = append(got, f)
		}
		sort.Strings(got)
		must.Eq(t, want, got, must.Sprint(name))
	}
}

func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

func TestCompleteFlagValues(t *testing.T) {
	cases := []struct {
		line string
		want []string
	}{
		{"nomad job status -ver", []string{"-verbose"}},
		{"nomad job run -detach testdata/tim", []string{"testdata/timeout.nomad.hcl"}},
		{"nomad job run testdata/mock", []string{"testdata/mock.nomad.hcl", "testdata/mock_changed.nomad.hcl"}},
		{"nomad job status -ca-cert testdata/golden/job_run", []string{"testdata/golden/job_run.golden"}},
		// A boolean flag takes no value: the next word is an argument.
		{"nomad job run -detach testdata/s", []string{"testdata/service_mrd.nomad.hcl", "testdata/syntax.nomad.hcl"}},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			must.Eq(t, tc.want, completeLine(t, "", tc.line))
		})
	}
}

// IDs and names complete from the server's prefix search.
func TestCompleteIDsFromTheServer(t *testing.T) {
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	for _, f := range []string{"testdata/mock.nomad.hcl", "testdata/timeout.nomad.hcl"} {
		code, _, errOut := cli(t, addr, "job", "run", "-detach", f)
		must.Eq(t, 0, code, must.Sprint(errOut))
	}
	client, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	_, err = client.Namespaces().Register(&api.Namespace{Name: "dev-team"}, nil)
	must.NoError(t, err)
	// -detach returns before the scheduler has placed anything.
	var allocID string
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		allocs, _, err := client.Jobs().Allocations("mock", true, nil)
		if err != nil {
			return err
		}
		if len(allocs) == 0 {
			return fmt.Errorf("job mock has no alloc yet")
		}
		allocID = allocs[0].ID
		return nil
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)))
	nodes, _, err := client.Nodes().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, nodes)
	nodeID := nodes[0].ID

	cases := []struct {
		line string
		want []string
	}{
		{"nomad job status ", []string{"mock", "timeout"}},
		{"nomad job status mo", []string{"mock"}},
		{"nomad job stop ti", []string{"timeout"}},
		{"nomad job inspect m", []string{"mock"}},
		{"nomad stop m", []string{"mock"}},
		{"nomad queue hold t", []string{"timeout"}},
		{"nomad status mo", []string{"mock"}},
		// An odd number of hex digits still completes a UUID.
		{"nomad alloc status " + allocID[:3], []string{allocID}},
		{"nomad alloc logs " + allocID[:4], []string{allocID}},
		{"nomad alloc stop " + allocID[:5], []string{allocID}},
		{"nomad alloc exec -task work " + allocID[:5], []string{allocID}},
		{"nomad node status " + nodeID[:1], []string{nodeID}},
		{"nomad node drain -enable " + nodeID[:2], []string{nodeID}},
		{"nomad node eligibility " + nodeID[:3], []string{nodeID}},
		{"nomad namespace status de", []string{"default", "dev-team"}},
		{"nomad namespace delete dev", []string{"dev-team"}},
		{"nomad job status -namespace dev", []string{"dev-team"}},
		{"nomad node pool info de", []string{"default"}},
		{"nomad job status nothing-like-this", nil},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			must.Eq(t, tc.want, completeLine(t, addr, tc.line))
		})
	}
}

// -autocomplete-install writes complete -C into the shell's rc file and
// -autocomplete-uninstall takes it out, as in Nomad.
func TestAutocompleteInstall(t *testing.T) {
	// Both at once are refused before anything is written.
	code, _ := shell(t, nil, "-autocomplete-install", "-autocomplete-uninstall")
	must.Eq(t, 1, code)

	// The installer edits the rc files of the home directory os/user
	// gives, whatever $HOME says, so it runs in a private user and mount
	// namespace with a scratch directory mounted over that home (root's,
	// inside the namespace). The script runs it only once the scratch
	// home is in place.
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare to give the installer a scratch home")
	}
	root, err := user.LookupId("0")
	must.NoError(t, err)
	bin, err := os.Executable()
	must.NoError(t, err)
	home := t.TempDir()
	// The uninstaller writes its work copy of the rc file to a temp file
	// in /tmp (hard-coded) and leaves it; take away the ones it made.
	leftBefore, err := filepath.Glob("/tmp/complete-*")
	must.NoError(t, err)
	t.Cleanup(func() {
		left, _ := filepath.Glob("/tmp/complete-*")
		for _, f := range left {
			if !slices.Contains(leftBefore, f) {
				_ = os.Remove(f)
			}
		}
	})
	bashrc := filepath.Join(home, ".bashrc")
	must.NoError(t, os.WriteFile(bashrc, []byte("# mine\n"), 0o644))
	must.NoError(t, os.WriteFile(filepath.Join(home, ".nomadq-test-home"), nil, 0o644))
	const script = `mount --bind "$1" "$2" && test -f "$2/.nomadq-test-home" && exec "$3" "$4"`
	inScratchHome := func(arg string) int {
		cmd := exec.Command("unshare", "-rm", "sh", "-c", script, "sh", home, root.HomeDir, bin, arg)
		// HOME too, in case os/user falls back to it.
		cmd.Env = append(os.Environ(), runAsCLI+"=1", "HOME="+home)
		out, err := cmd.CombinedOutput()
		t.Logf("%s: %s", arg, out)
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		must.NoError(t, err)
		return 0
	}
	if inScratchHome("-version") != 0 {
		t.Skip("no user and mount namespaces here")
	}

	must.Eq(t, 0, inScratchHome("-autocomplete-install"))
	rc, err := os.ReadFile(bashrc)
	must.NoError(t, err)
	must.StrHasPrefix(t, "# mine\n", string(rc))
	must.StrContains(t, string(rc), "\ncomplete -C "+bin+" nomad\n")

	// A second install is refused: the line is there already.
	must.Eq(t, 1, inScratchHome("-autocomplete-install"))

	must.Eq(t, 0, inScratchHome("-autocomplete-uninstall"))
	rc, err = os.ReadFile(bashrc)
	must.NoError(t, err)
	must.StrNotContains(t, string(rc), "complete -C")
	must.StrHasPrefix(t, "# mine\n", string(rc))
}
