package command

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/nomad/snapshot"
	"github.com/nomadq/nomadq/state"
)

const operatorSnapshotSaveUsage = `
Usage: nomad operator snapshot save [options] [<file>]

  Save an atomic, point-in-time snapshot of the servers' state (jobs,
  allocations, evaluations, nodes, namespaces, node pools, the keyring and
  the scheduler configuration) to a file, by default
  nomad-state-<date>-<unix time>.snap. An existing file is never
  overwritten. With -stale any server answers, for a cluster without a
  leader.
`

func runOperatorSnapshotSave(args []string, s Streams) int {
	var (
		af    apiFlags
		stale bool
	)
	flags := newFlagSet("operator snapshot save", s.Stderr, operatorSnapshotSaveUsage)
	af.register(flags)
	flags.BoolVar(&stale, "stale", false, "Let any server answer, not only the leader")
	if err := flags.Parse(args); err != nil {
		return 1
	}
	if flags.NArg() > 1 {
		fmt.Fprintln(s.Stderr, "This command takes either no arguments or one: <filename>")
		return 1
	}
	now := time.Now()
	filename := fmt.Sprintf("nomad-state-%04d%02d%02d-%d.snap", now.Year(), now.Month(), now.Day(), now.Unix())
	if flags.NArg() == 1 {
		filename = flags.Arg(0)
	}
	if _, err := os.Lstat(filename); err == nil {
		fmt.Fprintf(s.Stderr, "Destination file already exists: %q\n", filename)
		return 1
	} else if !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(s.Stderr, "Unexpected failure checking %q: %v\n", filename, err)
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	in, err := client.Operator().Snapshot(&api.QueryOptions{AllowStale: stale})
	if err != nil {
		fmt.Fprintf(s.Stderr, "Failed to get snapshot file: %v\n", err)
		return 1
	}
	defer in.Close()
	// Into a temporary file first, so that a failed download leaves no
	// file that looks like a snapshot.
	tmp := filename + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Failed to create file: %v\n", err)
		return 1
	}
	_, err = io.Copy(f, in)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		fmt.Fprintf(s.Stderr, "Failed to download snapshot file: %v\n", err)
		return 1
	}
	if err := os.Rename(tmp, filename); err != nil {
		_ = os.Remove(tmp)
		fmt.Fprintf(s.Stderr, "Failed to finalize snapshot file: %v\n", err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "State file written to %v\n", filename)
	return 0
}

const operatorSnapshotRestoreUsage = `
Usage: nomad operator snapshot restore [options] <file>

  Restore a snapshot file saved with "nomad operator snapshot save": the
  leader replaces the cluster's whole state with the snapshot's. This is
  meant for recovering from a disaster, into a fresh cluster.
`

func runOperatorSnapshotRestore(args []string, s Streams) int {
	var af apiFlags
	fs := newFlagSet("operator snapshot restore", s.Stderr, operatorSnapshotRestoreUsage)
	af.register(fs)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <filename>")
		return 1
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error opening snapshot file: %q\n", err)
		return 1
	}
	defer f.Close()
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if _, err := client.Operator().SnapshotRestore(f, &api.WriteOptions{}); err != nil {
		fmt.Fprintf(s.Stderr, "Failed to get restore snapshot: %v\n", err)
		return 1
	}
	fmt.Fprintln(s.Stdout, "Snapshot Restored")
	return 0
}

const operatorSnapshotInspectUsage = `
Usage: nomad operator snapshot inspect [options] <file>

  Display the metadata of a snapshot file and, for each type of record it
  holds, how many there are and their size, largest first. The file's
  checksums are verified.
`

// snapshotInspectJSON is the -json output of snapshot inspect.
type snapshotInspectJSON struct {
	Meta  snapshotInspectMeta
	Stats []state.SnapshotTypeStats
}

type snapshotInspectMeta struct {
	ID      string
	Size    int64
	Index   uint64
	Term    uint64
	Version int
}

func runOperatorSnapshotInspect(args []string, s Streams) int {
	var asJSON bool
	fs := newFlagSet("operator snapshot inspect", s.Stderr, operatorSnapshotInspectUsage)
	fs.BoolVar(&asJSON, "json", false, "Output the snapshot inspect in its JSON format")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <filename>")
		return 1
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error opening snapshot file: %s\n", err)
		return 1
	}
	defer f.Close()
	// The state goes through a pipe into the record counter while the
	// archive is read and its checksums verified.
	pr, pw := io.Pipe()
	type result struct {
		stats       []state.SnapshotTypeStats
		count, size int
		err         error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.stats, r.count, r.size, r.err = state.SnapshotStats(pr)
		// Drain what the counter did not read, so the reader never blocks.
		_, _ = io.Copy(io.Discard, pr)
		done <- r
	}()
	meta, err := snapshot.Read(f, pw)
	pw.Close()
	res := <-done
	if err == nil {
		err = res.err
	}
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error inspecting snapshot: %s\n", err)
		return 1
	}
	m := snapshotInspectMeta{ID: meta.ID, Size: meta.Size, Index: meta.Index, Term: meta.Term, Version: int(meta.Version)}
	if asJSON {
		_, code := outputFormat(s.Stdout, s.Stderr, true, "", snapshotInspectJSON{Meta: m, Stats: res.stats})
		return code
	}
	fmt.Fprintln(s.Stdout, formatKV([]string{
		"Created|" + snapshotCreated(meta.ID),
		"ID|" + meta.ID,
		"Size|" + humanBytes(uint64(meta.Size)),
		fmt.Sprintf("Index|%d", meta.Index),
		fmt.Sprintf("Term|%d", meta.Term),
		fmt.Sprintf("Version|%d", meta.Version),
	}))
	fmt.Fprintln(s.Stdout)
	rows := []string{"Type|Count|Size"}
	for _, st := range res.stats {
		rows = append(rows, fmt.Sprintf("%s|%d|%s", st.Name, st.Count, humanBytes(uint64(st.Sum))))
	}
	rows = append(rows, " | | ", fmt.Sprintf("Total|%d|%s", res.count, humanBytes(uint64(res.size))))
	fmt.Fprintln(s.Stdout, formatList(rows))
	return 0
}

// snapshotCreated reads the creation time out of a Raft snapshot ID,
// <term>-<index>-<unix milliseconds>.
func snapshotCreated(id string) string {
	parts := strings.Split(id, "-")
	if len(parts) != 3 {
		return ""
	}
	ms, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return ""
	}
	return formatTime(time.UnixMilli(ms))
}
