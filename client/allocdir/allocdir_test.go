package allocdir

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestBuild_LaysOutTheAllocAndTaskDirs(t *testing.T) {
	d := New(t.TempDir(), "a1")
	must.NoError(t, d.Build())
	must.NoError(t, d.BuildTask("web"))
	// Both are idempotent, as a restarted client rebuilds what exists.
	must.NoError(t, d.Build())
	must.NoError(t, d.BuildTask("web"))
	for _, p := range []string{d.LogDir(), filepath.Join(d.SharedDir(), DataDirName), filepath.Join(d.SharedDir(), TmpDirName),
		d.LocalDir("web"), filepath.Join(d.TaskDir("web"), TmpDirName), d.SecretsDir("web")} {
		fi, err := os.Stat(p)
		must.NoError(t, err)
		must.True(t, fi.IsDir(), must.Sprint(p))
	}
	fi, err := os.Stat(d.SecretsDir("web"))
	must.NoError(t, err)
	must.Eq(t, os.FileMode(0o700), fi.Mode().Perm())
	must.NoError(t, d.Destroy())
	_, err = os.Stat(d.Dir)
	must.True(t, os.IsNotExist(err))
}

// A root that does not exist yet is made with the first alloc's
// directory; a file where a directory belongs is an error, not skipped.
func TestBuild_MakesMissingParentsAndRefusesAFileInTheWay(t *testing.T) {
	d := New(filepath.Join(t.TempDir(), "data", "alloc"), "a1")
	must.NoError(t, d.Build())
	must.NoError(t, d.BuildTask("web"))
	must.DirExists(t, d.LogDir())
	must.DirExists(t, d.SecretsDir("web"))

	e := New(t.TempDir(), "a2")
	must.NoError(t, os.MkdirAll(e.Dir, 0o777))
	must.NoError(t, os.WriteFile(e.SharedDir(), []byte("not a dir"), 0o644))
	must.ErrorContains(t, e.Build(), "build alloc dir")
	must.NoError(t, os.WriteFile(e.TaskDir("web"), []byte("not a dir"), 0o644))
	must.ErrorContains(t, e.BuildTask("web"), "build task dir web")
}

// BenchmarkBuild makes one alloc's directories (the shared ones and one
// task's), as every alloc a client starts does.
func BenchmarkBuild(b *testing.B) {
	root := b.TempDir()
	b.ReportAllocs()
	for i := range b.N {
		d := New(root, fmt.Sprintf("a%d", i))
		if err := d.Build(); err != nil {
			b.Fatal(err)
		}
		if err := d.BuildTask("t"); err != nil {
			b.Fatal(err)
		}
	}
}

// While every turn at the removals is taken, a Destroy waits for one: a
// client collecting a thousand allocs at once keeps only a few goroutines
// (and so OS threads) blocked in unlink.
func TestDestroy_WaitsForATurnAtTheRemovals(t *testing.T) {
	d := New(t.TempDir(), "a1")
	must.NoError(t, d.Build())
	for range cap(removals) {
		removals <- struct{}{}
	}
	done := make(chan error, 1)
	go func() { done <- d.Destroy() }()
	select {
	case err := <-done:
		t.Fatalf("the removal ran while every turn was taken (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	must.DirExists(t, d.Dir)

	<-removals
	select {
	case err := <-done:
		must.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the removal did not run after a turn was released")
	}
	_, err := os.Stat(d.Dir)
	must.True(t, os.IsNotExist(err))
	for range cap(removals) - 1 {
		<-removals
	}
}
