package fsutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"
)

func TestLogFiles_LatestAndPrune(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "main.stdout")
	must.Eq(t, 0, LatestLogIndex(prefix))
	for _, n := range []string{"0", "1", "2", "3", "10", "x", "3.rotating"} {
		must.NoError(t, os.WriteFile(prefix+"."+n, nil, 0o644))
	}
	// Numbers compare as numbers; names that are not an index are not one.
	must.Eq(t, 10, LatestLogIndex(prefix))

	// With the live file 3 and two to keep, 1 and 0 go; a gap stops it.
	PruneLogs(prefix, 3, 2)
	for n, want := range map[string]bool{"0": false, "1": false, "2": true, "3": true, "10": true} {
		_, err := os.Stat(prefix + "." + n)
		must.Eq(t, want, err == nil, must.Sprintf("file %s", n))
	}
}
