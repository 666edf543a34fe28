package command

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/shoenig/test/must"
)

func TestEscapeReader(t *testing.T) {
	cases := []struct {
		name, in, want string
		closed         bool
	}{
		{"plain input", "ls -l\nexit\n", "ls -l\nexit\n", false},
		{"close at the start", "~.rest", "", true},
		{"close after a newline", "ls\n~.", "ls\n", true},
		{"close after a carriage return", "ls\r~.", "ls\r", true},
		{"not at a line start", "a~.b", "a~.b", false},
		{"doubled escape sends one", "~~.\n", "~.\n", false},
		{"other character goes through", "~x\n", "~x\n", false},
		{"escape then newline", "~\n~.", "~\n", true},
		{"lone escape at the end", "a\n~", "a\n~", false},
	}
	for _, tc := range cases {
		for _, oneByte := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				var src io.Reader = strings.NewReader(tc.in)
				if oneByte {
					src = iotest.OneByteReader(src)
				}
				closed := false
				r := newEscapeReader(src, '~', func(c byte) bool {
					if c == '.' {
						closed = true
						return true
					}
					return false
				})
				var got []byte
				buf := make([]byte, 3)
				for !closed {
					n, err := r.Read(buf)
					got = append(got, buf[:n]...)
					if err != nil {
						break
					}
				}
				must.Eq(t, tc.want, string(got))
				must.Eq(t, tc.closed, closed)
			})
		}
	}
}
