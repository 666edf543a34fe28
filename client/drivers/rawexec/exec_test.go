package rawexec

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/shoenig/test/must"
)

func TestExecTask(t *testing.T) {
	d := New(Options{Enabled: true})
	cases := []struct {
		name     string
		cmd      []string
		stdin    string
		tty      bool
		wantOut  string
		wantErr  string
		wantCode int
	}{
		{name: "output", cmd: []string{"echo", "hi"}, wantOut: "hi\n"},
		{name: "exit code", cmd: []string{"sh", "-c", "exit 5"}, wantCode: 5},
		{name: "killed by a signal", cmd: []string{"sh", "-c", "kill -TERM $$"}, wantCode: 128 + 15},
		{name: "task dir and env", cmd: []string{"sh", "-c", "cat marker; echo $GREETING"}, wantOut: "here\nhello\n"},
		{name: "stdin", cmd: []string{"cat"}, stdin: "piped", wantOut: "piped"},
		{name: "stderr apart", cmd: []string{"sh", "-c", "echo oops >&2"}, wantErr: "oops\n"},
		{name: "tty", cmd: []string{"sh", "-c", "test -t 1 && echo tty"}, tty: true, wantOut: "tty\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc2 := taskConfig(t, "x", nil)
			must.NoError(t, os.WriteFile(filepath.Join(tc2.TaskDir, "marker"), []byte("here\n"), 0o644))
			var out, errb bytes.Buffer
			opts := &drivers.ExecOptions{Command: tc.cmd, Tty: tc.tty, Stdin: strings.NewReader(tc.stdin), Stdout: &out, Stderr: &errb}
			code, err := d.ExecTask(context.Background(), tc2, opts)
			must.NoError(t, err)
			must.Eq(t, tc.wantCode, code)
			must.Eq(t, tc.wantOut, out.String())
			must.Eq(t, tc.wantErr, errb.String())
		})
	}
	_, err := d.ExecTask(context.Background(), taskConfig(t, "x", nil), &drivers.ExecOptions{Command: []string{"/no/such/program"}})
	must.ErrorContains(t, err, "/no/such/program")
	_, err = d.ExecTask(context.Background(), taskConfig(t, "x", nil), &drivers.ExecOptions{})
	must.ErrorContains(t, err, "no command")
}
