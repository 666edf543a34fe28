package command

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/nomad/api"
)

const allocFSUsage = `
Usage: nomad alloc fs [options] <allocation> [<path>]

  List the files of an allocation directory, or print one. The path is
  relative to the allocation directory ("/" is its root, the default).

  -H          Show sizes in bytes.
  -stat       Show the file's information instead of its contents.
  -f          Follow the file as it grows.
  -tail       Show the end of the file (the last 10 lines by default).
  -n <lines>  With -tail, the number of lines to show.
  -c <bytes>  With -tail, the number of bytes to show.
  -verbose    Show full information.
  -job        The argument is a job ID or prefix: use a random allocation
              of the job (a running one if there is one).
`

// Nomad's tail defaults: ten lines, read as 120 bytes a line.
const (
	defaultTailLines = 10
	bytesPerLine     = 120
)

func runAllocFS(args []string, s Streams) int {
	var (
		af                                   apiFlags
		verbose, machine, stat, follow, tail bool
		byJob                                bool
		numLines, numBytes                   int64
	)
	fs := newFlagSet("alloc fs", s.Stderr, allocFSUsage)
	af.register(fs)
	fs.BoolVar(&verbose, "verbose", false, "Show full information")
	fs.BoolVar(&machine, "H", false, "Show sizes in bytes")
	fs.BoolVar(&stat, "stat", false, "Show file information")
	fs.BoolVar(&follow, "f", false, "Follow the file")
	fs.BoolVar(&tail, "tail", false, "Show the end of the file")
	fs.Int64Var(&numLines, "n", -1, "With -tail, the number of lines")
	fs.Int64Var(&numBytes, "c", -1, "With -tail, the number of bytes")
	fs.BoolVar(&byJob, "job", false, "Use a random allocation of the job the argument names")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() < 1 && byJob {
		fmt.Fprintln(s.Stderr, "A job ID is required")
		return 1
	}
	if fs.NArg() < 1 {
		fmt.Fprintln(s.Stderr, "An allocation ID is required")
		return 1
	}
	if fs.NArg() > 2 {
		fmt.Fprintln(s.Stderr, "This command takes one or two arguments: <allocation> [<path>]")
		return 1
	}
	path := "/"
	if fs.NArg() == 2 {
		path = fs.Arg(1)
	}
	var (
		client *api.Client
		alloc  *api.Allocation
		err    error
	)
	if byJob {
		client, alloc, err = randomJobAlloc(&af, fs.Arg(0), "")
	} else {
		client, alloc, err = connectAllocVerbose(&af, fs.Arg(0), verbose)
	}
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	file, _, err := client.AllocFS().Stat(alloc, path, nil)
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	size := func(n int64) string {
		if machine {
			return fmt.Sprint(n)
		}
		return humanBytes(uint64(n))
	}
	name := func(f *api.AllocFileInfo) string {
		if f.IsDir {
			return f.Name + "/"
		}
		return f.Name
	}
	if stat {
		rows := []string{"Mode|Size|Modified Time|Content Type|Name",
			fmt.Sprintf("%s|%s|%s|%s|%s", file.FileMode, size(file.Size), formatTime(file.ModTime), file.ContentType, name(file))}
		fmt.Fprintln(s.Stdout, formatList(rows))
		return 0
	}
	if file.IsDir {
		files, _, err := client.AllocFS().List(alloc, path, nil)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error listing alloc dir: %s\n", err)
			return 1
		}
		rows := []string{"Mode|Size|Modified Time|Name"}
		for _, f := range files {
			rows = append(rows, fmt.Sprintf("%s|%s|%s|%s", f.FileMode, size(f.Size), formatTime(f.ModTime), name(f)))
		}
		fmt.Fprintln(s.Stdout, formatList(rows))
		return 0
	}
	out := s.Stdout
	if out == nil {
		out = os.Stdout
	}
	if !tail {
		if follow {
			return followAllocFile(client, alloc, path, 0, out, s.Stderr)
		}
		r, err := client.AllocFS().Cat(alloc, path, nil)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error reading file: %v\n", err)
			return 1
		}
		defer r.Close()
		if _, err := io.Copy(out, r); err != nil {
			fmt.Fprintf(s.Stderr, "Error reading file: %v\n", err)
			return 1
		}
		return 0
	}
	offset := int64(defaultTailLines * bytesPerLine)
	switch {
	case numLines != -1 && numBytes != -1:
		fmt.Fprintln(s.Stderr, "Both -n and -c are not allowed")
		return 1
	case numLines < -1 || numBytes < -1:
		fmt.Fprintln(s.Stderr, "Invalid size is specified")
		return 1
	case numLines != -1:
		offset = numLines * bytesPerLine
	case numBytes != -1:
		offset = numBytes
	default:
		numLines = defaultTailLines
	}
	offset = min(offset, file.Size)
	r, err := client.AllocFS().ReadAt(alloc, path, file.Size-offset, -1, nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error tailing file: %v\n", err)
		return 1
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error tailing file: %v\n", err)
		return 1
	}
	if numLines != -1 {
		data = lastLines(data, int(numLines))
	}
	out.Write(data)
	if follow {
		return followAllocFile(client, alloc, path, file.Size, out, s.Stderr)
	}
	return 0
}

// lastLines keeps the last n lines of data (a final newline does not start
// a line).
func lastLines(data []byte, n int) []byte {
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if data[i] == '\n' {
			n--
			if n == 0 {
				return data[i+1:]
			}
		}
	}
	return data
}

// followAllocFile streams the file from offset until interrupted or the
// file is deleted.
func followAllocFile(client *api.Client, alloc *api.Allocation, path string, offset int64, out, errw io.Writer) int {
	cancel := make(chan struct{})
	frames, errCh := client.AllocFS().Stream(alloc, path, api.OriginStart, offset, cancel, nil)
	r := api.NewFrameReader(frames, errCh, cancel)
	defer r.Close()
	if _, err := io.Copy(out, r); err != nil && !bytes.Contains([]byte(err.Error()), []byte("EOF")) {
		fmt.Fprintf(errw, "Error tailing file: %v\n", err)
		return 1
	}
	return 0
}
