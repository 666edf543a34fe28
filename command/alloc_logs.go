package command

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/nomad/api"
)

const allocLogsUsage = `
Usage: nomad alloc logs [options] <allocation> <task>
Alias: nomad logs

  Streams the stdout/stderr of the given allocation and task.

Logs Specific Options:

  -stdout          Display stdout logs (the default, except with -f alone,
                   which follows both stdout and stderr).
  -stderr          Display stderr logs.
  -verbose         Show full information.
  -task <name>     The task whose logs to show; wins over the argument.
  -group <name>    With -job, the task group to pick the allocation from.
  -job             The argument is a job ID or prefix: use a random
                   allocation of the job (a running one if there is one).
  -f               Follow the log.
  -tail            Show the end of the log; -n defaults to 10.
  -n <lines>       With -tail, the number of lines to show.
  -c <bytes>       With -tail, the number of bytes to show.
`

// tailSettle is how long a followed tail waits for the log's end to arrive
// before it cuts it to the last -n lines.
var tailSettle = 500 * time.Millisecond

func runAllocLogs(args []string, s Streams) int {
	var (
		af                           apiFlags
		stderr, stdout, follow, tail bool
		byJob, verbose               bool
		numLines, numBytes           int64
		task, group                  string
	)
	fs := newFlagSet("alloc logs", s.Stderr, allocLogsUsage)
	af.register(fs)
	fs.BoolVar(&stderr, "stderr", false, "Display stderr logs")
	fs.BoolVar(&stdout, "stdout", false, "Display stdout logs")
	fs.BoolVar(&follow, "f", false, "Follow the log")
	fs.BoolVar(&tail, "tail", false, "Show the end of the log")
	fs.Int64Var(&numLines, "n", -1, "With -tail, the number of lines to show")
	fs.Int64Var(&numBytes, "c", -1, "With -tail, the number of bytes to show")
	fs.BoolVar(&byJob, "job", false, "Use a random allocation of the job the argument names")
	fs.StringVar(&group, "group", "", "With -job, the task group to pick the allocation from")
	fs.StringVar(&task, "task", "", "The task whose logs to show")
	fs.BoolVar(&verbose, "verbose", false, "Show full information")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	switch {
	case fs.NArg() < 1 && byJob:
		fmt.Fprintln(s.Stderr, "A job ID is required")
		return 1
	case fs.NArg() < 1:
		fmt.Fprintln(s.Stderr, "An allocation ID is required")
		return 1
	case fs.NArg() > 2:
		fmt.Fprintln(s.Stderr, "This command takes one or two arguments: <allocation> [<task>]")
		return 1
	}
	if group != "" && !byJob {
		fmt.Fprintln(s.Stderr, "-group is only valid with -job")
		return 1
	}
	if stderr && stdout {
		fmt.Fprintln(s.Stderr, "Unable to support both stdout and stderr")
		return 1
	}
	if tail && numLines >= 0 && numBytes >= 0 {
		fmt.Fprintln(s.Stderr, "Failed to read log: both -n and -c set")
		return 1
	}
	var (
		client *api.Client
		alloc  *api.Allocation
		err    error
	)
	if byJob {
		client, alloc, err = randomJobAlloc(&af, fs.Arg(0), group)
	} else {
		client, alloc, err = connectAllocVerbose(&af, fs.Arg(0), verbose)
	}
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if task == "" {
		task = fs.Arg(1)
	}
	task, err = allocTask(alloc, task)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Failed to validate task: %s\n", err)
		return 1
	}
	out := s.Stdout
	if out == nil {
		out = os.Stdout
	}

	// -f alone follows both streams, each to its own.
	if follow && !stderr && !stdout && !tail && numLines <= 0 && numBytes <= 0 {
		return followBothLogs(client, alloc.ID, task, out, s.Stderr)
	}
	logType := "stdout"
	if stderr {
		logType = "stderr"
	}
	if !tail {
		body, err := openLog(client, alloc.ID, task, logType, "start", 0, follow)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Failed to read %s file: %v\n", logType, err)
			return 1
		}
		defer body.Close()
		return copyLog(out, body, logType, s.Stderr)
	}
	offset := numBytes
	if numBytes < 0 {
		if numLines < 0 {
			numLines = defaultTailLines
		}
		offset = numLines * bytesPerLine
	}
	body, err := openLog(client, alloc.ID, task, logType, "end", offset, follow)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Failed to read %s file: %v\n", logType, err)
		return 1
	}
	defer body.Close()
	if numBytes >= 0 {
		return copyLog(out, body, logType, s.Stderr)
	}
	if !follow {
		data, err := io.ReadAll(body)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Failed to read %s file: %v\n", logType, err)
			return 1
		}
		_, _ = out.Write(lastLines(data, int(numLines)))
		return 0
	}
	return copyLog(out, &tailLinesReader{r: body, lines: int(numLines), settle: tailSettle}, logType, s.Stderr)
}

// connectAllocVerbose is connectAlloc whose list of the allocations an
// ambiguous prefix matches shows full IDs with -verbose.
func connectAllocVerbose(af *apiFlags, prefix string, verbose bool) (*api.Client, *api.Allocation, error) {
	client, err := af.client()
	if err != nil {
		return nil, nil, err
	}
	if len(prefix) == 1 {
		return nil, nil, fmt.Errorf("Alloc ID must contain at least two characters.")
	}
	stub, err := resolveAlloc(client, prefix, verbose)
	if err != nil {
		if amb, ok := err.(*errAmbiguous); ok {
			return nil, nil, fmt.Errorf("%s", amb.msg)
		}
		return nil, nil, err
	}
	alloc, _, err := client.Allocations().Info(stub.ID, &api.QueryOptions{Namespace: stub.Namespace})
	if err != nil {
		return nil, nil, fmt.Errorf("Error querying allocation: %s", err)
	}
	return client, alloc, nil
}

// allocTask checks that the named task is in the alloc's group, or, when
// none is named, picks the group's only task.
func allocTask(alloc *api.Allocation, name string) (string, error) {
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return "", fmt.Errorf("task group %q not found in the allocation's job", alloc.TaskGroup)
	}
	if name == "" {
		if len(tg.Tasks) != 1 {
			return "", fmt.Errorf("Allocation has multiple tasks. Please specify a task name")
		}
		return tg.Tasks[0].Name, nil
	}
	return name, checkAllocTask(alloc, name)
}

// openLog opens a task's log as plain bytes from offset, counted from the
// start or the end.
func openLog(client *api.Client, allocID, task, logType, origin string, offset int64, follow bool) (io.ReadCloser, error) {
	params := map[string]string{
		"task": task, "type": logType, "origin": origin, "offset": fmt.Sprint(offset),
		"follow": fmt.Sprint(follow), "plain": "true",
	}
	return client.Raw().Response("/v1/client/fs/logs/"+allocID, &api.QueryOptions{Params: params})
}

func copyLog(out io.Writer, body io.Reader, logType string, errw io.Writer) int {
	if _, err := io.Copy(out, body); err != nil {
		fmt.Fprintf(errw, "Failed to read %s file: %v\n", logType, err)
		return 1
	}
	return 0
}

// followBothLogs follows stdout to out and stderr to errw until both end.
func followBothLogs(client *api.Client, allocID, task string, out, errw io.Writer) int {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		code int
	)
	for _, f := range []struct {
		logType string
		w       io.Writer
	}{{"stdout", out}, {"stderr", errw}} {
		wg.Go(func() {
			body, err := openLog(client, allocID, task, f.logType, "start", 0, true)
			if err == nil {
				defer body.Close()
				_, err = io.Copy(f.w, body)
			}
			if err != nil {
				mu.Lock()
				code = 1
				fmt.Fprintf(errw, "Failed to tail stdout and stderr files: %v\n", err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return code
}

// tailLinesReader passes on the last lines of what r sends before it goes
// quiet for settle (the log's end the client sends first), then everything
// that follows.
type tailLinesReader struct {
	r       io.Reader
	lines   int
	settle  time.Duration
	once    sync.Once
	chunks  chan []byte
	err     error
	pending []byte
	settled bool
}

func (t *tailLinesReader) Read(p []byte) (int, error) {
	t.once.Do(func() {
		t.chunks = make(chan []byte)
		go func() {
			for {
				buf := make([]byte, 32<<10)
				n, err := t.r.Read(buf)
				if n > 0 {
					t.chunks <- buf[:n]
				}
				if err != nil {
					t.err = err
					close(t.chunks)
					return
				}
			}
		}()
	})
	for len(t.pending) == 0 {
		if !t.settled {
			var head bytes.Buffer
			timer := time.NewTimer(t.settle)
		collect:
			for {
				select {
				case c, ok := <-t.chunks:
					if !ok {
						break collect
					}
					head.Write(c)
					timer.Reset(t.settle)
				case <-timer.C:
					break collect
				}
			}
			timer.Stop()
			t.settled = true
			t.pending = lastLines(head.Bytes(), t.lines)
			continue
		}
		c, ok := <-t.chunks
		if !ok {
			return 0, t.err
		}
		t.pending = c
	}
	n := copy(p, t.pending)
	t.pending = t.pending[n:]
	return n, nil
}
