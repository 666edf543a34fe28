package drivers

import (
	"strings"
	"syscall"
	"testing"

	"github.com/shoenig/test/must"
)

func TestParseSignal(t *testing.T) {
	cases := []struct {
		name string
		want syscall.Signal
	}{
		{"", syscall.SIGINT},
		{"SIGTERM", syscall.SIGTERM},
		{"sigterm", syscall.SIGTERM},
		{"TERM", syscall.SIGTERM},
		{"term", syscall.SIGTERM},
		{"SIGHUP", syscall.SIGHUP},
		{"SIGUSR1", syscall.SIGUSR1},
		{"usr2", syscall.SIGUSR2},
		{"SIGKILL", syscall.SIGKILL},
		{"SIGWINCH", syscall.SIGWINCH},
		{"SIGXFSZ", syscall.SIGXFSZ},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSignal(tc.name)
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
	for _, bad := range []string{"SIGFOO", "SIG", "15", "SIG TERM", " SIGTERM"} {
		_, err := ParseSignal(bad)
		must.Error(t, err, must.Sprint(bad))
	}
}

// TestSignalNames keeps the os.signals fingerprint and ParseSignal in
// step: every advertised name parses, and the names earlier releases
// advertised are all still there.
func TestSignalNames(t *testing.T) {
	names := SignalNames()
	for _, n := range names {
		_, err := ParseSignal(n)
		must.NoError(t, err, must.Sprint(n))
	}
	before := "SIGABRT,SIGALRM,SIGBUS,SIGCHLD,SIGCONT,SIGFPE,SIGHUP,SIGILL,SIGINT,SIGIO,SIGKILL,SIGPIPE,SIGPROF,SIGQUIT,SIGSEGV,SIGSTOP,SIGSYS,SIGTERM,SIGTRAP,SIGTSTP,SIGTTIN,SIGTTOU,SIGURG,SIGUSR1,SIGUSR2,SIGWINCH,SIGXCPU,SIGXFSZ"
	for n := range strings.SplitSeq(before, ",") {
		must.SliceContains(t, names, n)
	}
}
