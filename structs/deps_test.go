package structs

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/depstest"
)

// TestDeps_NoApiModule keeps the internal model free of the official
// client's wire types: the mapping between the two belongs to apiconv, so
// that a field added to the api module cannot slip into the model
// unclassified. Test files count too (-test).
func TestDeps_NoApiModule(t *testing.T) {
	deps := depstest.Deps(t, true, ".")
	must.SliceContains(t, deps, "github.com/nomadq/nomadq/structs", must.Sprint("the listing should include the package itself"))
	for _, d := range deps {
		if depstest.Within(d, "github.com/hashicorp/nomad/api") {
			t.Errorf("structs depends on %s; convert in apiconv instead", d)
		}
	}
}
