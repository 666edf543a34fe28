package command

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/raft"
	"github.com/ryanuber/columnize"

	"github.com/nomadq/nomadq/nomad/snapshot"
	"github.com/nomadq/nomadq/nomad/snapshot/nomadfmt"
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

  Restore a snapshot file saved with "nomad operator snapshot save", by
  nomadq or by Nomad 2.0: the leader replaces the cluster's whole state
  with the snapshot's. This is meant for recovering from a disaster, or
  moving a cluster's state, into a fresh cluster. Records of types nomadq
  does not model (CSI volumes, deployments...) are left out and listed.
`

// snapshotRestoreAnswer is the part of the restore's answer the command
// prints.
type snapshotRestoreAnswer struct {
	SkippedSummary string
}

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
	path := fs.Arg(0)
	f, err := os.Open(path)
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
	// The official client's SnapshotRestore drops the answer's body; read
	// it through Raw to print what was skipped.
	var answer snapshotRestoreAnswer
	if _, err := client.Raw().Write("/v1/operator/snapshot", f, &answer, &api.WriteOptions{}); err != nil {
		// Nomad's servers answer a restore with an empty body.
		if err.Error() != emptyAnswer {
			fmt.Fprintf(s.Stderr, "Failed to restore snapshot %q: %v\n", path, err)
			return 1
		}
	}
	fmt.Fprintln(s.Stdout, "Snapshot Restored")
	if sum := answer.SkippedSummary; sum != "" {
		fmt.Fprintf(s.Stdout, "%s%s (record types nomadq does not model)\n", strings.ToUpper(sum[:1]), sum[1:])
	}
	return 0
}

// emptyAnswer is the official client's error for a successful answer
// with no body to decode.
const emptyAnswer = "Got 0 byte response with non-nil decode object"

const operatorSnapshotInspectUsage = `
Usage: nomad operator snapshot inspect [options] <file>

  Display the metadata of a snapshot file and, for each type of record it
  holds, how many there are and their size, largest first, as Nomad's
  command does. It reads the files Nomad 2.0 and nomadq save, and nomadq's
  older ones. The file's checksums are verified.
`

// snapshotInspectJSON is the -json output of snapshot inspect, Nomad's.
type snapshotInspectJSON struct {
	Meta  *raft.SnapshotMeta
	Stats []snapshotTypeStats
}

// snapshotTypeStats is one row of the inspect table.
type snapshotTypeStats struct {
	Name  string
	Sum   int64
	Count int
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
		stats []snapshotTypeStats
		total snapshotTypeStats
		err   error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.stats, r.total, r.err = snapshotStateStats(bufio.NewReaderSize(pr, 64<<10))
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
		fmt.Fprintf(s.Stderr, "Error inspecting snapshot %q: %s\n", fs.Arg(0), err)
		return 1
	}
	if asJSON {
		_, code := outputFormat(s.Stdout, s.Stderr, true, "", snapshotInspectJSON{Meta: meta, Stats: res.stats})
		return code
	}
	fmt.Fprintln(s.Stdout, formatKV([]string{
		"Created|" + snapshotCreated(meta.ID),
		"ID|" + meta.ID,
		"Size|" + humanIBytes(uint64(meta.Size)),
		fmt.Sprintf("Index|%d", meta.Index),
		fmt.Sprintf("Term|%d", meta.Term),
		fmt.Sprintf("Version|%d", meta.Version),
	}))
	fmt.Fprintln(s.Stdout)
	rows := []string{"Type|Count|Size"}
	for _, st := range res.stats {
		rows = append(rows, fmt.Sprintf("%s|%d|%s", st.Name, st.Count, humanIBytes(uint64(st.Sum))))
	}
	rows = append(rows, " | | ", fmt.Sprintf("Total|%d|%s", res.total.Count, humanIBytes(uint64(res.total.Sum))))
	// Nomad lays this table out without trimming the blank row.
	fmt.Fprintln(s.Stdout, columnize.Format(rows, columnize.DefaultConfig()))
	return 0
}

// snapshotStateStats counts a state stream's records by type, in Nomad's
// format (Nomad's type names) or in nomadq's older internal one, told
// apart by the first byte.
func snapshotStateStats(r *bufio.Reader) ([]snapshotTypeStats, snapshotTypeStats, error) {
	first, err := r.Peek(1)
	if err != nil {
		return nil, snapshotTypeStats{}, fmt.Errorf("read snapshot state: %w", err)
	}
	var stats []snapshotTypeStats
	if nomadfmt.IsNomad(first) {
		counts, total, err := nomadfmt.Inspect(r)
		if err != nil {
			return nil, snapshotTypeStats{}, err
		}
		for _, c := range counts {
			stats = append(stats, snapshotTypeStats{Name: c.Name, Sum: c.Size, Count: c.Count})
		}
		return stats, snapshotTypeStats{Name: "Total", Sum: total.Size, Count: total.Count}, nil
	}
	counts, count, size, err := state.SnapshotStats(r)
	if err != nil {
		return nil, snapshotTypeStats{}, err
	}
	for _, c := range counts {
		stats = append(stats, snapshotTypeStats{Name: c.Name, Sum: int64(c.Sum), Count: c.Count})
	}
	return stats, snapshotTypeStats{Name: "Total", Sum: int64(size), Count: count}, nil
}

// humanIBytes renders a size in binary units as Nomad's inspect does
// (go-humanize's IBytes): one decimal below 10 ("2.0 KiB"), none from 10
// on ("12 KiB"), rounded half up.
func humanIBytes(b uint64) string {
	if b < 10 {
		return fmt.Sprintf("%d B", b)
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	e := math.Floor(math.Log(float64(b)) / math.Log(1024))
	v := math.Floor(float64(b)/math.Pow(1024, e)*10+0.5) / 10
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, units[int(e)])
	}
	return fmt.Sprintf("%.0f %s", v, units[int(e)])
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
