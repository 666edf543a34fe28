package docker

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestStampStripper_MessagesAndLines(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "main.stdout")
	mark, err := openSinceMark(prefix)
	must.NoError(t, err)
	t1 := "2026-12-07T03:06:46.220123456Z"
	t2 := "2026-12-07T03:06:46.220123999Z"

	// Multiplexed: one message per Write.
	var out bytes.Buffer
	s := newStampStripper(&out, mark, false)
	for _, m := range []string{t1 + " before\n", t2 + " partial", "not-a-stamp x\n"} {
		n, err := s.Write([]byte(m))
		must.NoError(t, err)
		must.Eq(t, len(m), n)
	}
	must.Eq(t, "before\npartialnot-a-stamp x\n", out.String())

	// A terminal's raw stream: a stamp starts every line, split anywhere.
	out.Reset()
	s = newStampStripper(&out, mark, true)
	raw := t1 + " one\n" + t2 + " two\n"
	for i := 0; i < len(raw); i += 7 {
		_, err := s.Write([]byte(raw[i:min(i+7, len(raw))]))
		must.NoError(t, err)
	}
	must.Eq(t, "one\ntwo\n", out.String())
	must.NoError(t, mark.Close())

	// The mark holds the newest stamp; following starts just after it.
	want, err := time.Parse(time.RFC3339Nano, t2)
	must.NoError(t, err)
	must.Eq(t, want.Add(time.Nanosecond).UnixNano(), readSinceMark(prefix).UnixNano())
	must.True(t, readSinceMark(filepath.Join(t.TempDir(), "none.stdout")).IsZero())
}
