// Package fsutil holds the client's small file helpers.
package fsutil

import (
	"io"
	"io/fs"
	"os"
)

// CopyFile copies the regular file src to dst, created (or truncated)
// with perm.
func CopyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
