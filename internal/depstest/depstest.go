// Package depstest lists what a package links, for the tests that keep
// a room's imports to its rules (the client links no server, the agent
// config starts nothing, the model has no api types). Only tests import
// it; it must not be imported by code that ships in the binary.
package depstest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// Deps returns the import paths `go list -deps` gives for patterns, run
// in the calling test's package directory; withTests counts the test
// files' imports too. It skips the test where the go tool is missing.
func Deps(t *testing.T, withTests bool, patterns ...string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH; cannot list the package's dependencies")
	}
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}"}
	if withTests {
		args = append(args, "-test")
	}
	out, err := exec.Command(goTool, append(args, patterns...)...).CombinedOutput()
	must.NoError(t, err, must.Sprintf("go list: %s", out))
	return strings.Fields(string(out))
}

// Within reports whether path is pkg or a package below it.
func Within(path, pkg string) bool {
	return path == pkg || strings.HasPrefix(path, pkg+"/")
}
