package structs

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// TestDeps_NoApiModule keeps the internal model free of the official
// client's wire types: the mapping between the two belongs to apiconv, so
// that a field added to the api module cannot slip into the model
// unclassified. Test files count too (-test).
func TestDeps_NoApiModule(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH; cannot list the package's dependencies")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-test", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	must.NoError(t, err, must.Sprintf("go list: %s", out))
	deps := strings.Fields(string(out))
	must.SliceContains(t, deps, "github.com/nomadq/nomadq/structs", must.Sprint("the listing should include the package itself"))
	for _, d := range deps {
		if d == "github.com/hashicorp/nomad/api" || strings.HasPrefix(d, "github.com/hashicorp/nomad/api/") {
			t.Errorf("structs depends on %s; convert in apiconv instead", d)
		}
	}
}
