package structs

import (
	"errors"
	"fmt"
	"testing"

	"github.com/shoenig/test/must"
)

func TestRPCCodedError(t *testing.T) {
	cases := []struct {
		name string
		err  error
		code int
		msg  string
		ok   bool
	}{
		{"coded", NewErrRPCCoded(400, "missing group"), 400, "missing group", true},
		{"formatted, with a comma", NewErrRPCCodedf(404, "job %q not found, sorry", "a,b"), 404, `job "a,b" not found, sorry`, true},
		{"after an RPC hop", errors.New(NewErrRPCCoded(400, "x").Error()), 400, "x", true},
		{"wrapped loses the prefix", fmt.Errorf("scale: %w", NewErrRPCCoded(400, "x")), 0, "", false},
		{"wrapped keeping the code", WrapRPCCodedf(NewErrRPCCoded(404, "x not found"), "scale %q", "j"), 404, `scale "j": x not found`, true},
		{"uncoded wrapped keeping none", WrapRPCCodedf(errors.New("boom"), "scale"), 0, "", false},
		{"plain", errors.New("boom"), 0, "", false},
		{"bad code", errors.New("RPC Error:: four,x"), 0, "", false},
		{"nil", nil, 0, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, msg, ok := CodeFromRPCCodedErr(tc.err)
			must.Eq(t, tc.ok, ok)
			must.Eq(t, tc.code, code)
			must.Eq(t, tc.msg, msg)
		})
	}
}

// TestWrapRPCCodedfKeepsTheChain: the wrapped error stays reachable, so a
// caller in the process still tells a sentinel apart after the wrap.
func TestWrapRPCCodedfKeepsTheChain(t *testing.T) {
	sentinel := NewErrRPCCoded(403, "Permission denied")
	for _, err := range []error{sentinel, errors.New("plain")} {
		wrapped := WrapRPCCodedf(err, "read %s", "x")
		must.ErrorIs(t, wrapped, err)
	}
	plain := WrapRPCCodedf(errors.New("plain"), "read %s", "x")
	must.EqError(t, plain, "read x: plain")
}
