package fsutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"
)

func TestCopyFile(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	must.NoError(t, os.WriteFile(src, []byte("contents"), 0o644))
	must.NoError(t, os.WriteFile(dst, []byte("longer old contents"), 0o644))
	must.NoError(t, CopyFile(src, dst, 0o600))
	got, err := os.ReadFile(dst)
	must.NoError(t, err)
	must.Eq(t, "contents", string(got), must.Sprint("an existing file is truncated"))

	fresh := filepath.Join(dir, "fresh")
	must.NoError(t, CopyFile(src, fresh, 0o600))
	fi, err := os.Stat(fresh)
	must.NoError(t, err)
	must.Eq(t, os.FileMode(0o600), fi.Mode().Perm())

	must.Error(t, CopyFile(filepath.Join(dir, "missing"), dst, 0o600))
}
