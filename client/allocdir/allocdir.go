// Package allocdir lays out an allocation's directory:
//
//	<root>/<alloc id>/alloc/{logs,data,tmp}     shared by the group's tasks
//	<root>/<alloc id>/<task>/{local,secrets,tmp}
package allocdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Names of the directories, as tasks see them.
const (
	SharedAllocName = "alloc"
	LogDirName      = "logs"
	DataDirName     = "data"
	TmpDirName      = "tmp"
	LocalDirName    = "local"
	SecretsDirName  = "secrets"
)

// AllocDir is one allocation's directory.
type AllocDir struct {
	// Dir is <root>/<alloc id>.
	Dir string
}

// New returns the directory of allocID under root; nothing is created.
func New(root, allocID string) *AllocDir {
	return &AllocDir{Dir: filepath.Join(root, allocID)}
}

// SharedDir is <alloc dir>/alloc.
func (d *AllocDir) SharedDir() string { return filepath.Join(d.Dir, SharedAllocName) }

// LogDir is <alloc dir>/alloc/logs.
func (d *AllocDir) LogDir() string { return filepath.Join(d.Dir, SharedAllocName, LogDirName) }

// TaskDir is <alloc dir>/<task>.
func (d *AllocDir) TaskDir(task string) string { return filepath.Join(d.Dir, task) }

// LocalDir is <alloc dir>/<task>/local.
func (d *AllocDir) LocalDir(task string) string { return filepath.Join(d.Dir, task, LocalDirName) }

// SecretsDir is <alloc dir>/<task>/secrets.
func (d *AllocDir) SecretsDir(task string) string {
	return filepath.Join(d.Dir, task, SecretsDirName)
}

// Build creates the shared directories; it is idempotent.
func (d *AllocDir) Build() error {
	shared := d.SharedDir()
	for _, p := range []string{d.Dir, shared, filepath.Join(shared, LogDirName), filepath.Join(shared, DataDirName), filepath.Join(shared, TmpDirName)} {
		if err := mkdir(p, 0o777); err != nil {
			return fmt.Errorf("build alloc dir: %w", err)
		}
	}
	return nil
}

// BuildTask creates a task's directories; it is idempotent.
func (d *AllocDir) BuildTask(task string) error {
	for _, p := range []string{d.TaskDir(task), d.LocalDir(task), filepath.Join(d.TaskDir(task), TmpDirName)} {
		if err := mkdir(p, 0o777); err != nil {
			return fmt.Errorf("build task dir %s: %w", task, err)
		}
	}
	if err := mkdir(d.SecretsDir(task), 0o700); err != nil {
		return fmt.Errorf("build task dir %s: %w", task, err)
	}
	return nil
}

// mkdir makes the directory p; one already there is fine. The alloc's
// directories are made top down, so p's parent is usually there: one
// mkdir, falling back to os.MkdirAll only when the parent is missing.
// (MkdirAll stats every path and its missing parents before making them:
// on a dev node those stats were a sixth of the CPU its alloc
// directories took.)
func mkdir(p string, perm os.FileMode) error {
	err := os.Mkdir(p, perm)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return os.MkdirAll(p, perm)
	case errors.Is(err, fs.ErrExist):
		if fi, serr := os.Stat(p); serr == nil && fi.IsDir() {
			return nil
		}
	}
	return err
}

// Destroy removes the whole alloc directory, waiting for a turn among
// the removals (see removals).
func (d *AllocDir) Destroy() error {
	removals <- struct{}{}
	defer func() { <-removals }()
	return os.RemoveAll(d.Dir)
}

// removals bounds how many alloc directories the process removes at once.
// When the servers collect many allocs together (`nomad system gc` after
// a thousand-job drain), the client destroys their runners together, and
// a removal blocks in the kernel on each of its unlinks and rmdirs. The Go
// runtime gives a goroutine blocked in a system call its own OS thread
// while others wait to run, and keeps the thread for the life of the
// process: unbounded, a dev agent grew to 407 threads (14 MiB of stacks)
// over three drains on a slow disk. Nothing waits for a removal but the
// runner's own cleanup. Building alloc directories is not bounded: that
// held up new allocs (website/performance-notes.md).
var removals = make(chan struct{}, 4)
