package network

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// DefaultNetnsDir is where named network namespaces live, where
// `ip netns` looks for them.
const DefaultNetnsDir = "/var/run/netns"

// createNetns makes a new network namespace and pins it by bind-mounting
// it at dir/name, as `ip netns add` does, so it lives on without any
// process in it.
func createNetns(dir, name string) (string, error) {
	return pinNetns(dir, name, "")
}

// pinNetns bind-mounts the namespace at src (a new one when src is "")
// at dir/name.
func pinNetns(dir, name, src string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// The directory is made a shared mount point, as iproute2 makes it:
	// a namespace pinned later then shows in the mount namespaces of
	// tasks started earlier, and its unmount reaches them too.
	if err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		if !errors.Is(err, unix.EINVAL) {
			return "", fmt.Errorf("make %s shared: %w", dir, err)
		}
		if err := unix.Mount(dir, dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return "", fmt.Errorf("bind %s on itself: %w", dir, err)
		}
		if err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
			return "", fmt.Errorf("make %s shared: %w", dir, err)
		}
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return "", fmt.Errorf("create netns mount point: %w", err)
	}
	f.Close()
	if src != "" {
		if err := unix.Mount(src, path, "none", unix.MS_BIND, ""); err != nil {
			_ = os.Remove(path)
			return "", fmt.Errorf("pin network namespace %s at %s: %w", src, path, err)
		}
		return path, nil
	}
	errCh := make(chan error, 1)
	go func() {
		// This thread moves to the new namespace and is never unlocked:
		// the runtime then ends it with the goroutine, so no other
		// goroutine ever runs in the wrong namespace.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errCh <- fmt.Errorf("unshare network namespace: %w", err)
			return
		}
		src := fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
		if err := unix.Mount(src, path, "none", unix.MS_BIND, ""); err != nil {
			errCh <- fmt.Errorf("pin network namespace at %s: %w", path, err)
			return
		}
		errCh <- nil
	}()
	if err := <-errCh; err != nil {
		_ = os.Remove(path)
		return "", err
	}
	return path, nil
}

// removeNetns unpins and removes a namespace made by createNetns; a path
// that is already gone is not an error.
func removeNetns(path string) error {
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount netns %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove netns %s: %w", path, err)
	}
	return nil
}

// isNetns reports whether path is a pinned network namespace.
func isNetns(path string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return false
	}
	return st.Type == unix.NSFS_MAGIC
}
