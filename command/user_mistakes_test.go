package command

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
)

// A new user's mistakes end with exit code 1 and the server's words for
// what was wrong, not an "Unexpected response code: 500".
func TestCLI_UserMistakesExit1(t *testing.T) {
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	code, _, errOut := cli(t, addr, "job", "run", "-detach", "testdata/mock.nomad.hcl")
	must.Eq(t, 0, code, must.Sprint(errOut))

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"revert to the current version", []string{"job", "revert", "mock", "0"},
			`Error retrieving job versions: Unexpected response code: 400 (job "mock" is already at version 0)`},
		{"run in a namespace that does not exist", []string{"job", "run", "-namespace", "nope", "testdata/mock.nomad.hcl"},
			`Unexpected response code: 400 (job "mock" is in nonexistent namespace "nope")`},
		{"alloc ID prefix that is not hex", []string{"alloc", "status", "zz"},
			`No allocation(s) with prefix or id "zz" found`},
		{"alloc ID prefix of one character", []string{"alloc", "status", "z"},
			`Identifier must contain at least two characters.`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := cli(t, addr, tc.args...)
			must.Eq(t, 1, code, must.Sprint(out))
			must.StrContains(t, errOut, tc.want)
			must.StrNotContains(t, errOut, "500")
		})
	}
}
