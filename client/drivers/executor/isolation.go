package executor

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Isolation is how the init step walls an exec task in.
type Isolation struct {
	// PIDNamespace and IPCNamespace give the task namespaces of its own
	// (pid_mode and ipc_mode "private"). A mount namespace is always made.
	PIDNamespace bool
	IPCNamespace bool
	// ChrootEnv maps host paths to where they appear in the chroot; they
	// are bind-mounted read-only. Missing host paths are skipped.
	ChrootEnv map[string]string
	// AllocDir is the host's shared alloc dir, mounted at /alloc.
	AllocDir string
	// User is who the task runs as.
	User string
	// Capabilities is the task's bounding set when it runs as root.
	Capabilities []string
	// AmbientCapabilities are granted to a task of another user.
	AmbientCapabilities []string
	// WorkDir is the task's working directory inside the chroot.
	WorkDir string
	// Mounts are host volumes bind-mounted into the chroot.
	Mounts []VolumeMount `json:",omitempty"`
}

// VolumeMount is a host directory bind-mounted at Destination in the
// chroot, read-only when ReadOnly is set.
type VolumeMount struct {
	Source      string
	Destination string
	ReadOnly    bool
}

// credential is a user as the kernel knows it.
type credential struct {
	uid, gid uint32
	groups   []uint32
}

func lookupUser(name string) (*credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("look up user %q: %w", name, err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	c := &credential{uid: uint32(uid), gid: uint32(gid)}
	gids, _ := u.GroupIds()
	for _, g := range gids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			c.groups = append(c.groups, uint32(n))
		}
	}
	return c, nil
}

// Device nodes a task gets in its /dev, as bind mounts of the host's.
var chrootDevices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// isolate builds the task's view of the world in its new mount namespace
// and chroots into it. Every mount is made in that namespace only, so the
// host never sees one and the kernel undoes them all when the task's last
// process ends, whatever way it ends.
func isolate(root string, iso *Isolation, cred *credential) error {
	// Private first: otherwise mounts below would propagate to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	for src, dst := range iso.ChrootEnv {
		if err := bindReadOnly(src, filepath.Join(root, dst)); err != nil {
			return err
		}
	}
	if iso.AllocDir != "" {
		if err := bind(iso.AllocDir, filepath.Join(root, "alloc"), 0); err != nil {
			return err
		}
	}
	for _, m := range iso.Mounts {
		// Cleaned as an absolute path first, so that no ".." climbs
		// out of the chroot.
		dst := filepath.Join(root, filepath.Clean("/"+m.Destination))
		var extra uintptr
		if m.ReadOnly {
			extra = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV
		}
		if err := bind(m.Source, dst, extra); err != nil {
			return fmt.Errorf("volume mount %s: %w", m.Destination, err)
		}
	}
	if err := mountSecrets(filepath.Join(root, "secrets"), cred); err != nil {
		return err
	}
	for _, d := range []string{"local", "tmp"} {
		p := filepath.Join(root, d)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		if err := os.Chown(p, int(cred.uid), int(cred.gid)); err != nil {
			return fmt.Errorf("chown %s: %w", p, err)
		}
	}
	if err := mountDev(filepath.Join(root, "dev")); err != nil {
		return err
	}
	proc := filepath.Join(root, "proc")
	if err := os.MkdirAll(proc, 0o555); err != nil {
		return err
	}
	// A proc of the task's own PID namespace: it lists only its processes.
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount proc: %w", err)
	}
	if err := unix.Chroot(root); err != nil {
		return fmt.Errorf("chroot %s: %w", root, err)
	}
	wd := iso.WorkDir
	if wd == "" {
		wd = "/"
	}
	if err := os.Chdir(wd); err != nil {
		return fmt.Errorf("work_dir %q: %w", wd, err)
	}
	return nil
}

// bind bind-mounts src (a file or a directory) on dst, creating dst.
func bind(src, dst string, extra uintptr) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if st.IsDir() {
		err = os.MkdirAll(dst, 0o755)
	} else if _, serr := os.Lstat(dst); serr == nil {
		// An existing file is the mount point as it is: opening it for
		// writing would fail on a read-only mount (a chroot's /etc).
	} else {
		if err = os.MkdirAll(filepath.Dir(dst), 0o755); err == nil {
			var f *os.File
			if f, err = os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				f.Close()
			}
		}
	}
	if err != nil {
		return fmt.Errorf("mount point %s: %w", dst, err)
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s on %s: %w", src, dst, err)
	}
	if extra != 0 {
		// Flags of a bind mount change only by remounting it.
		if err := unix.Mount("", dst, "", unix.MS_BIND|unix.MS_REMOUNT|extra, ""); err != nil {
			return fmt.Errorf("remount %s: %w", dst, err)
		}
	}
	return nil
}

func bindReadOnly(src, dst string) error {
	if _, err := os.Stat(src); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return bind(src, dst, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV)
}

// secretsSizeMB is the size of the secrets tmpfs, Nomad's default.
const secretsSizeMB = 1

// mountSecrets puts a tmpfs only the task's user can read on the secrets
// dir, keeping the files the client wrote there before the task started.
func mountSecrets(dir string, cred *credential) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	saved := map[string][]byte{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Type().IsRegular() {
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				saved[e.Name()] = b
			}
		}
	}
	opts := fmt.Sprintf("mode=0700,size=%dm,uid=%d,gid=%d", secretsSizeMB, cred.uid, cred.gid)
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, opts); err != nil {
		return fmt.Errorf("mount secrets tmpfs: %w", err)
	}
	for name, b := range saved {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			return fmt.Errorf("restore secret %s: %w", name, err)
		}
		_ = os.Chown(p, int(cred.uid), int(cred.gid))
	}
	return nil
}

// mountDev gives the task a /dev of its own with the harmless devices.
func mountDev(dev string) error {
	if err := os.MkdirAll(dev, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, d := range chrootDevices {
		if err := bind("/dev/"+d, filepath.Join(dev, d), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	shm := filepath.Join(dev, "shm")
	if err := os.MkdirAll(shm, 0o1777); err != nil {
		return err
	}
	if err := unix.Mount("shm", shm, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777,size=65536k"); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		_ = os.Symlink(target, filepath.Join(dev, name))
	}
	return nil
}

// dropPrivileges narrows the capability bounding set and becomes the
// task's user; it must run on the thread that execs the task.
func dropPrivileges(cred *credential, iso *Isolation) error {
	keep, err := capabilitySet(iso.Capabilities)
	if err != nil {
		return err
	}
	if err := dropBoundingSet(keep); err != nil {
		return err
	}
	ambient, err := capabilitySet(iso.AmbientCapabilities)
	if err != nil {
		return err
	}
	if cred.uid != 0 && len(ambient) > 0 {
		// Keep the permitted set across setuid so the ambient ones can
		// be raised afterwards.
		if err := unix.Prctl(unix.PR_SET_KEEPCAPS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("keep capabilities: %w", err)
		}
	}
	groups := make([]int, len(cred.groups))
	for i, g := range cred.groups {
		groups[i] = int(g)
	}
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("set groups: %w", err)
	}
	if err := syscall.Setgid(int(cred.gid)); err != nil {
		return fmt.Errorf("set gid %d: %w", cred.gid, err)
	}
	if err := syscall.Setuid(int(cred.uid)); err != nil {
		return fmt.Errorf("set uid %d: %w", cred.uid, err)
	}
	if cred.uid != 0 && len(ambient) > 0 {
		return raiseAmbient(ambient)
	}
	return nil
}
