package allocdir

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ErrEscapes is returned for a path that leads outside the alloc dir,
// by ".." or through a symlink.
var ErrEscapes = errors.New("escapes the allocation directory")

// ErrSecret is returned for reading a file in a task's secrets dir, which
// the file system API never serves.
var ErrSecret = errors.New("reading secret file prohibited")

// FileInfo describes one file of an alloc dir; its JSON is the api
// client's AllocFileInfo.
type FileInfo struct {
	Name        string
	IsDir       bool
	Size        int64
	FileMode    string
	ModTime     time.Time
	ContentType string `json:",omitempty"`
}

// Resolve turns a path as the API takes it ("/" is the alloc dir, so an
// absolute path is read from it too) into a host path inside the alloc
// dir. It refuses paths that climb out with ".." and existing paths whose
// symlinks lead out; a path that does not exist is returned as joined.
func (d *AllocDir) Resolve(p string) (string, error) {
	root, err := filepath.EvalSymlinks(d.Dir)
	if err != nil {
		return "", fmt.Errorf("alloc dir: %w", err)
	}
	joined := filepath.Join(root, p)
	if !within(root, joined) {
		return "", fmt.Errorf("path %q %w", p, ErrEscapes)
	}
	real, err := filepath.EvalSymlinks(joined)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("path %q: %w", p, os.ErrNotExist)
		}
		return "", err
	}
	if !within(root, real) {
		return "", fmt.Errorf("path %q %w (a symlink leads out of it)", p, ErrEscapes)
	}
	return real, nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Stat describes one path of the alloc dir.
func (d *AllocDir) Stat(p string) (*FileInfo, error) {
	real, err := d.Resolve(p)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	fi := fileInfo(st)
	if !st.IsDir() {
		fi.ContentType = contentType(real)
	}
	return fi, nil
}

// List describes the entries of a directory of the alloc dir, by name.
func (d *AllocDir) List(p string) ([]*FileInfo, error) {
	real, err := d.Resolve(p)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return nil, err
	}
	out := make([]*FileInfo, 0, len(entries))
	for _, e := range entries {
		st, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, fileInfo(st))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Open opens a file of the alloc dir for reading; secrets are refused.
func (d *AllocDir) Open(p string) (*os.File, error) {
	real, err := d.Resolve(p)
	if err != nil {
		return nil, err
	}
	root, _ := filepath.EvalSymlinks(d.Dir)
	if rel, err := filepath.Rel(root, real); err == nil {
		parts := strings.Split(rel, string(filepath.Separator))
		if len(parts) >= 2 && parts[1] == SecretsDirName && parts[0] != SharedAllocName {
			return nil, fmt.Errorf("%w: %s", ErrSecret, p)
		}
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("path %q is a directory", p)
	}
	return f, nil
}

func fileInfo(st os.FileInfo) *FileInfo {
	return &FileInfo{Name: st.Name(), IsDir: st.IsDir(), Size: st.Size(), FileMode: st.Mode().String(), ModTime: st.ModTime()}
}

// contentType sniffs a file's first bytes as http.DetectContentType does.
func contentType(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 512)
	n, _ := io.ReadFull(f, buf)
	return http.DetectContentType(buf[:n])
}
