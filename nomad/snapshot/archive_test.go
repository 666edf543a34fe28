package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"
)

func archive(t *testing.T, state string) []byte {
	t.Helper()
	var buf bytes.Buffer
	meta := &raft.SnapshotMeta{Version: 1, ID: "2-14-1700000000000", Index: 14, Term: 2, Size: int64(len(state))}
	must.NoError(t, Write(&buf, meta, bytes.NewReader([]byte(state))))
	return buf.Bytes()
}

// rewrite decompresses an archive, lets edit change its members and
// compresses it again.
func rewrite(t *testing.T, in []byte, edit func(name string, body []byte) (string, []byte)) []byte {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(in))
	must.NoError(t, err)
	tr := tar.NewReader(gz)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		must.NoError(t, err)
		body, err := io.ReadAll(tr)
		must.NoError(t, err)
		name, body := edit(hdr.Name, body)
		if name == "" {
			continue
		}
		must.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(body))}))
		_, err = tw.Write(body)
		must.NoError(t, err)
	}
	must.NoError(t, tw.Close())
	must.NoError(t, zw.Close())
	return out.Bytes()
}

func TestArchive_RoundTrip(t *testing.T) {
	var state bytes.Buffer
	meta, err := Read(bytes.NewReader(archive(t, "the fsm state")), &state)
	must.NoError(t, err)
	must.Eq(t, "the fsm state", state.String())
	must.Eq(t, "2-14-1700000000000", meta.ID)
	must.Eq(t, uint64(14), meta.Index)
	must.Eq(t, uint64(2), meta.Term)
	must.Eq(t, int64(13), meta.Size)
}

func TestArchive_Damaged(t *testing.T) {
	good := archive(t, "the fsm state")
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"not gzip", []byte("invalid data"), "failed to decompress snapshot"},
		{"state changed", rewrite(t, good, func(n string, b []byte) (string, []byte) {
			if n == stateFile {
				return n, []byte("the FSM state")
			}
			return n, b
		}), `hash check failed for "state.bin"`},
		{"meta missing", rewrite(t, good, func(n string, b []byte) (string, []byte) {
			if n == metaFile {
				return "", nil
			}
			return n, b
		}), `hash check failed for "meta.json"`},
		{"sums missing", rewrite(t, good, func(n string, b []byte) (string, []byte) {
			if n == sumsFile {
				return "", nil
			}
			return n, b
		}), "no SHA256SUMS in snapshot"},
		{"extra member", rewrite(t, good, func(n string, b []byte) (string, []byte) {
			if n == sumsFile {
				return "extra.txt", b
			}
			return n, b
		}), `unexpected file "extra.txt"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(bytes.NewReader(tc.in))
			must.ErrorContains(t, err, tc.want)
		})
	}
}
