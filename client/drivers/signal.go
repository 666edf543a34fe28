package drivers

import (
	"fmt"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ParseSignal turns a signal name into a signal; the empty name is SIGINT,
// Nomad's default kill signal. Nomad takes "SIGTERM"; the name is also
// taken in any case and without its "SIG" prefix ("sigterm", "TERM"), as
// nomadq always has.
func ParseSignal(name string) (syscall.Signal, error) {
	if name == "" {
		return syscall.SIGINT, nil
	}
	n := strings.ToUpper(name)
	if !strings.HasPrefix(n, "SIG") {
		n = "SIG" + n
	}
	if s := unix.SignalNum(n); s != 0 {
		return s, nil
	}
	return 0, fmt.Errorf("unknown signal %q", name)
}

// SignalNames lists, sorted, the names ParseSignal takes in their
// canonical form ("SIGTERM"): the node fingerprints them as os.signals.
func SignalNames() []string {
	var names []string
	// Real-time signals have no names; the named ones are all below 32.
	for s := syscall.Signal(1); s < 32; s++ {
		if n := unix.SignalName(s); n != "" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
