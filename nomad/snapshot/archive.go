// Package snapshot reads and writes snapshot archives, the files of
// "nomad operator snapshot save" and the body of /v1/operator/snapshot:
// a gzip-compressed tar of meta.json (the Raft snapshot metadata),
// state.bin (the FSM's snapshot stream) and SHA256SUMS (the SHA-256 of the
// other two), the layout Nomad uses, so that the tools that check one
// check the other.
package snapshot

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

// The archive's member files.
const (
	metaFile  = "meta.json"
	stateFile = "state.bin"
	sumsFile  = "SHA256SUMS"
)

// Write writes the archive of a Raft snapshot to out: its metadata and
// exactly meta.Size bytes of state read from state.
func Write(out io.Writer, meta *raft.SnapshotMeta, state io.Reader) error {
	gz := gzip.NewWriter(out)
	tw := tar.NewWriter(gz)
	now := time.Now()
	sums := map[string]hash.Hash{metaFile: sha256.New(), stateFile: sha256.New()}

	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("encode snapshot metadata: %w", err)
	}
	metaJSON = append(metaJSON, '\n')
	if err := writeMember(tw, metaFile, int64(len(metaJSON)), now, io.TeeReader(bytes.NewReader(metaJSON), sums[metaFile])); err != nil {
		return err
	}
	if err := writeMember(tw, stateFile, meta.Size, now, io.TeeReader(state, sums[stateFile])); err != nil {
		return err
	}
	var list bytes.Buffer
	for _, name := range []string{metaFile, stateFile} {
		fmt.Fprintf(&list, "%x  %s\n", sums[name].Sum(nil), name)
	}
	if err := writeMember(tw, sumsFile, int64(list.Len()), now, &list); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("finish snapshot archive: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("compress snapshot archive: %w", err)
	}
	return nil
}

func writeMember(tw *tar.Writer, name string, size int64, mtime time.Time, body io.Reader) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: size, ModTime: mtime}); err != nil {
		return fmt.Errorf("write %s header: %w", name, err)
	}
	n, err := io.CopyN(tw, body, size)
	if err != nil {
		return fmt.Errorf("write %s (%d of %d bytes): %w", name, n, size, err)
	}
	return nil
}

// Read reads an archive from in, copies its state to state and returns
// its metadata once every member's checksum matches SHA256SUMS. Members
// other than the three of the layout, a missing member and trailing data
// are errors; state may have received data before an error is found.
func Read(in io.Reader, state io.Writer) (*raft.SnapshotMeta, error) {
	gz, err := gzip.NewReader(in)
	if err != nil {
		return nil, fmt.Errorf("failed to decompress snapshot: %w", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	sums := map[string]hash.Hash{metaFile: sha256.New(), stateFile: sha256.New()}
	var meta *raft.SnapshotMeta
	var list []byte
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("failed to read snapshot file: %w", err)
		}
		switch hdr.Name {
		case metaFile:
			// Read whole before decoding, so the checksum covers every
			// byte and not only what the decoder consumed.
			buf, err := io.ReadAll(io.TeeReader(tr, sums[metaFile]))
			if err != nil {
				return nil, fmt.Errorf("failed to read snapshot metadata: %w", err)
			}
			meta = new(raft.SnapshotMeta)
			if err := json.Unmarshal(buf, meta); err != nil {
				return nil, fmt.Errorf("failed to decode snapshot metadata: %w", err)
			}
		case stateFile:
			if _, err := io.Copy(io.MultiWriter(state, sums[stateFile]), tr); err != nil {
				return nil, fmt.Errorf("failed to read snapshot state: %w", err)
			}
		case sumsFile:
			if list, err = io.ReadAll(tr); err != nil {
				return nil, fmt.Errorf("failed to read snapshot hashes: %w", err)
			}
		default:
			return nil, fmt.Errorf("failed to read snapshot file: unexpected file %q in snapshot", hdr.Name)
		}
	}
	if err := verify(list, sums); err != nil {
		return nil, fmt.Errorf("failed checking integrity of snapshot: %w", err)
	}
	if meta == nil {
		return nil, fmt.Errorf("failed to read snapshot file: no %s", metaFile)
	}
	if extra, err := io.Copy(io.Discard, gz); err != nil || extra != 0 {
		return nil, fmt.Errorf("failed to read snapshot file: %d bytes after the archive (%v)", extra, err)
	}
	return meta, nil
}

// verify checks the SHA256SUMS list against the computed sums: every
// member must be listed with its sum, and nothing else.
func verify(list []byte, sums map[string]hash.Hash) error {
	if list == nil {
		return fmt.Errorf("no %s in snapshot", sumsFile)
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(list))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			return fmt.Errorf("malformed %s line %q", sumsFile, sc.Text())
		}
		h, known := sums[name]
		if !known {
			return fmt.Errorf("list has a hash for %q, which is not in the snapshot layout", name)
		}
		want, err := hex.DecodeString(sum)
		if err != nil || !bytes.Equal(want, h.Sum(nil)) {
			return fmt.Errorf("hash check failed for %q", name)
		}
		seen[name] = true
	}
	for name := range sums {
		if !seen[name] {
			return fmt.Errorf("file missing for %q", name)
		}
	}
	return nil
}

// Verify reads a whole archive and checks it, discarding the state, and
// returns its metadata.
func Verify(in io.Reader) (*raft.SnapshotMeta, error) {
	return Read(in, io.Discard)
}
