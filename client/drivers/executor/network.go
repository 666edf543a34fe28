package executor

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/nomadq/nomadq/client/drivers"
)

// The alloc's network namespace is joined in the init step, on the thread
// that then execs the task: setns changes only the calling thread, and
// exec keeps that thread's namespaces, so the task (and all it forks) is
// in the alloc's network while neither the waiter nor the client ever
// leaves the host's. No thread of a multi-threaded process is switched
// and handed back, which is the unsafe part of joining in the client.

// networkCloneflags are the namespaces the init step needs for a
// network: a mount namespace of its own to show the alloc's hosts and
// resolv.conf files (exec tasks have one anyway), a UTS one for the
// hostname.
func networkCloneflags(n *drivers.NetworkIsolation) uintptr {
	if n == nil {
		return 0
	}
	var f uintptr
	if n.HostsFile != "" || n.ResolvConf != "" {
		f |= unix.CLONE_NEWNS
	}
	if n.Hostname != "" {
		f |= unix.CLONE_NEWUTS
	}
	return f
}

// joinNetwork moves the calling (locked) thread into the alloc's network
// namespace and sets its hostname.
func joinNetwork(n *drivers.NetworkIsolation) error {
	f, err := os.Open(n.Path)
	if err != nil {
		return fmt.Errorf("open the alloc's network namespace: %w", err)
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("join the alloc's network namespace %s: %w", n.Path, err)
	}
	if n.Hostname != "" {
		if err := unix.Sethostname([]byte(n.Hostname)); err != nil {
			return fmt.Errorf("set hostname %q: %w", n.Hostname, err)
		}
	}
	return nil
}

// networkMounts are the alloc's hosts and resolv.conf files, mounted
// read-only over the task's /etc ones.
func networkMounts(n *drivers.NetworkIsolation) []VolumeMount {
	if n == nil {
		return nil
	}
	var out []VolumeMount
	if n.HostsFile != "" {
		out = append(out, VolumeMount{Source: n.HostsFile, Destination: "/etc/hosts", ReadOnly: true})
	}
	if n.ResolvConf != "" {
		out = append(out, VolumeMount{Source: n.ResolvConf, Destination: "/etc/resolv.conf", ReadOnly: true})
	}
	return out
}

// mountNetworkFiles puts the alloc's files over the host's /etc ones in
// the init step's own mount namespace (a raw_exec task, which has no
// chroot), private first so the host never sees them.
func mountNetworkFiles(n *drivers.NetworkIsolation) error {
	ms := networkMounts(n)
	if len(ms) == 0 {
		return nil
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	for _, m := range ms {
		if err := bind(m.Source, m.Destination, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV); err != nil {
			return err
		}
	}
	return nil
}
