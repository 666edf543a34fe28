package allocdir

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"
)

func testDir(t *testing.T) *AllocDir {
	t.Helper()
	outside := filepath.Join(t.TempDir(), "outside.txt")
	must.NoError(t, os.WriteFile(outside, []byte("host secret"), 0o644))
	d := New(t.TempDir(), "a1")
	must.NoError(t, d.Build())
	must.NoError(t, d.BuildTask("web"))
	must.NoError(t, os.WriteFile(filepath.Join(d.TaskDir("web"), "out.txt"), []byte("hello"), 0o644))
	must.NoError(t, os.WriteFile(filepath.Join(d.SecretsDir("web"), "token"), []byte("s3cr3t"), 0o600))
	must.NoError(t, os.Symlink(outside, filepath.Join(d.TaskDir("web"), "leak")))
	must.NoError(t, os.Symlink(filepath.Dir(outside), filepath.Join(d.TaskDir("web"), "leakdir")))
	must.NoError(t, os.Symlink("out.txt", filepath.Join(d.TaskDir("web"), "inside")))
	return d
}

func TestAllocDir_OpenRefusesWhatIsNotTheAllocs(t *testing.T) {
	d := testDir(t)
	cases := []struct {
		path    string
		want    string
		wantErr error
	}{
		{"web/out.txt", "hello", nil},
		{"/web/out.txt", "hello", nil},
		{"web/inside", "hello", nil},
		{"web/../web/out.txt", "hello", nil},
		{"../../etc/passwd", "", ErrEscapes},
		{"web/../../outside.txt", "", ErrEscapes},
		{"web/leak", "", ErrEscapes},
		{"web/leakdir/outside.txt", "", ErrEscapes},
		{"/etc/passwd", "", os.ErrNotExist},
		{"web/secrets/token", "", ErrSecret},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			f, err := d.Open(tc.path)
			if tc.wantErr != nil {
				must.True(t, errors.Is(err, tc.wantErr), must.Sprint(err))
				return
			}
			must.NoError(t, err)
			defer f.Close()
			b, err := io.ReadAll(f)
			must.NoError(t, err)
			must.Eq(t, tc.want, string(b))
		})
	}
}

func TestAllocDir_ListAndStat(t *testing.T) {
	d := testDir(t)
	files, err := d.List("/")
	must.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	must.Eq(t, []string{"alloc", "web"}, names)

	fi, err := d.Stat("web/out.txt")
	must.NoError(t, err)
	must.Eq(t, int64(5), fi.Size)
	must.Eq(t, "text/plain; charset=utf-8", fi.ContentType)

	_, err = d.List("web/leakdir")
	must.ErrorIs(t, err, ErrEscapes)
	_, err = d.Stat("..")
	must.ErrorIs(t, err, ErrEscapes)
}
