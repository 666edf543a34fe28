package command

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/agenttest"
)

var rootKeyRow = regexp.MustCompile(`^([0-9a-f-]+)\s+(active|inactive|prepublished|rekeying)\s+\S+(\s+\S+)?\s*$`)

// rootKeyRows parses the list output into key ID -> state.
func rootKeyRows(t *testing.T, out string) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	must.Eq(t, []string{"Key", "State", "Create", "Time", "Publish", "Time"}, strings.Fields(lines[0]))
	rows := map[string]string{}
	for _, l := range lines[1:] {
		m := rootKeyRow.FindStringSubmatch(l)
		must.NotNil(t, m, must.Sprintf("row %q", l))
		rows[m[1]] = m[2]
	}
	return rows
}

func TestRootKeyringCommands(t *testing.T) {
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()

	code, out, errOut := cli(t, addr, "operator", "root", "keyring", "list")
	must.Eq(t, 0, code, must.Sprint(errOut))
	rows := rootKeyRows(t, out)
	must.MapLen(t, 1, rows)
	var first string
	for id, st := range rows {
		first = id
		must.Eq(t, 8, len(id), must.Sprint("short IDs unless -verbose"))
		must.Eq(t, "active", st)
	}

	refusals := []struct {
		name string
		args []string
		want string
	}{
		{"neither -now nor -prepublish", []string{"operator", "root", "keyring", "rotate"}, `One of "-now" or "-prepublish" must be used`},
		{"both -now and -prepublish", []string{"operator", "root", "keyring", "rotate", "-now", "-prepublish", "1h"}, `One of "-now" or "-prepublish" must be used`},
		{"negative -prepublish", []string{"operator", "root", "keyring", "rotate", "-prepublish", "-1h"}, "Invalid -prepublish -1h0m0s"},
		{"full with -prepublish", []string{"operator", "root", "keyring", "rotate", "-prepublish", "1h", "-full"}, "full and publish_time cannot be used together"},
		{"remove the active key", []string{"operator", "root", "keyring", "remove", first}, "is active and cannot be deleted"},
		{"remove an unknown key", []string{"operator", "root", "keyring", "remove", "ffffffff"}, `No encryption key(s) with prefix or ID "ffffffff" found`},
		{"remove without an ID", []string{"operator", "root", "keyring", "remove"}, "requires one argument"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := cli(t, addr, tc.args...)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, tc.want)
		})
	}

	code, out, errOut = cli(t, addr, "operator", "root", "keyring", "rotate", "-now", "-verbose")
	must.Eq(t, 0, code, must.Sprint(errOut))
	rotated := rootKeyRows(t, out)
	must.MapLen(t, 1, rotated)
	var second string
	for id, st := range rotated {
		second = id
		must.Eq(t, 36, len(id))
		must.Eq(t, "active", st)
	}

	code, out, _ = cli(t, addr, "operator", "root", "keyring", "list", "-verbose")
	must.Eq(t, 0, code)
	rows = rootKeyRows(t, out)
	must.MapLen(t, 2, rows)
	must.Eq(t, "active", rows[second])
	var firstFull string
	for id, st := range rows {
		if strings.HasPrefix(id, first) {
			firstFull = id
			must.Eq(t, "inactive", st)
		}
	}

	code, out, errOut = cli(t, addr, "operator", "root", "keyring", "remove", first)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Removed encryption key "+firstFull+"\n", out)
	code, out, _ = cli(t, addr, "operator", "root", "keyring", "list", "-verbose")
	must.Eq(t, 0, code)
	must.Eq(t, map[string]string{second: "active"}, rootKeyRows(t, out))

	// -prepublish: the key waits, with its publish time in the last column.
	code, out, errOut = cli(t, addr, "operator", "root", "keyring", "rotate", "-prepublish", "1000h")
	must.Eq(t, 0, code, must.Sprint(errOut))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	must.SliceLen(t, 2, lines)
	must.SliceLen(t, 4, strings.Fields(lines[1]), must.Sprintf("row %q has a publish time", lines[1]))
	code, out, _ = cli(t, addr, "operator", "root", "keyring", "list")
	must.Eq(t, 0, code)
	states := map[string]int{}
	for _, st := range rootKeyRows(t, out) {
		states[st]++
	}
	must.Eq(t, map[string]int{"active": 1, "prepublished": 1}, states)
}

// rotate -full answers at once with the new active key; the old key is
// rekeying until the leader has re-encrypted the variable, inactive then,
// and the variable reads back the same.
func TestRootKeyringRotateFull(t *testing.T) {
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()

	code, _, errOut := cli(t, addr, "var", "put", "app/rekeyed", "answer=42")
	must.Eq(t, 0, code, must.Sprint(errOut))
	code, out, errOut := cli(t, addr, "operator", "root", "keyring", "list", "-verbose")
	must.Eq(t, 0, code, must.Sprint(errOut))
	before := rootKeyRows(t, out)
	must.MapLen(t, 1, before)

	code, out, errOut = cli(t, addr, "operator", "root", "keyring", "rotate", "-now", "-full", "-verbose")
	must.Eq(t, 0, code, must.Sprint(errOut))
	rotated := rootKeyRows(t, out)
	must.MapLen(t, 1, rotated)
	for id, st := range rotated {
		_, old := before[id]
		must.False(t, old)
		must.Eq(t, "active", st)
	}

	must.Wait(t, wait.InitialSuccess(
		wait.ErrorFunc(func() error {
			code, out, errOut := cli(t, addr, "operator", "root", "keyring", "list", "-verbose")
			if code != 0 {
				return fmt.Errorf("list: %s", errOut)
			}
			for id, st := range rootKeyRows(t, out) {
				if _, old := before[id]; old && st != "inactive" {
					return fmt.Errorf("old key %s is %s", id, st)
				}
			}
			return nil
		}),
		wait.Timeout(60*time.Second),
		wait.Gap(100*time.Millisecond),
	))
	code, out, errOut = cli(t, addr, "var", "get", "-item", "answer", "app/rekeyed")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "42", strings.TrimSpace(out))
	for id := range before {
		code, _, errOut = cli(t, addr, "operator", "root", "keyring", "remove", id)
		must.Eq(t, 0, code, must.Sprint(errOut))
	}
}
