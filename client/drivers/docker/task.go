package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/fsutil"
)

// task is a container the driver tracks.
type task struct {
	cfg         *drivers.TaskConfig
	containerID string
	// tty says the container has a terminal: its output is one stream.
	tty bool
	// imageID is the image the task holds against garbage collection.
	imageID string

	// done is closed once result is set.
	done   chan struct{}
	result *drivers.ExitResult

	// cancelLogs stops following the output; logsDone is closed when the
	// follower has written all it got.
	cancelLogs context.CancelFunc
	logsDone   chan struct{}
	stopOnce   sync.Once
}

// stop stops following the container's output.
func (t *task) stop() {
	t.stopOnce.Do(t.cancelLogs)
	<-t.logsDone
}

// track starts following a started (or recovered) container: its output
// from since (zero: all of it) into the task's log files, and its exit.
func (d *Driver) track(tc *drivers.TaskConfig, id string, tty bool, imageID string, since time.Time) *task {
	logCtx, cancel := context.WithCancel(d.ctx)
	t := &task{cfg: tc, containerID: id, tty: tty, imageID: imageID, done: make(chan struct{}), cancelLogs: cancel, logsDone: make(chan struct{})}
	d.mu.Lock()
	d.tasks[tc.ID] = t
	d.mu.Unlock()
	go func() {
		defer close(t.logsDone)
		if err := d.followLogs(logCtx, t, since); err != nil && logCtx.Err() == nil {
			d.logger.Warn("following container output failed", "task_id", tc.ID, "container_id", shortID(id), "error", err)
		}
	}()
	go d.waitExit(t)
	return t
}

// followLogs copies the container's stdout and stderr into the task's
// rotated log files until the container's output ends.
func (d *Driver) followLogs(ctx context.Context, t *task, since time.Time) error {
	tc := t.cfg
	if tc.LogsDisabled || d.cfg.DisableLogCollection {
		// The output stays with the engine (its logging config).
		return nil
	}
	stdoutPrefix, stderrPrefix := tc.StdoutPrefix(), tc.StderrPrefix()
	maxSize := int64(tc.MaxFileSizeMB) << 20
	stdout, err := openLogWriter(stdoutPrefix, tc.MaxFiles, maxSize)
	if err != nil {
		return err
	}
	defer stdout.Close()
	stderr, err := openLogWriter(stderrPrefix, tc.MaxFiles, maxSize)
	if err != nil {
		return err
	}
	defer stderr.Close()
	mark, err := openSinceMark(stdoutPrefix)
	if err != nil {
		return err
	}
	defer mark.Close()
	opts := client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: true, Timestamps: true}
	if !since.IsZero() {
		opts.Since = strconv.FormatInt(since.Unix(), 10) + "." + fmt.Sprintf("%09d", since.Nanosecond())
	}
	rc, err := d.client.ContainerLogs(ctx, t.containerID, opts)
	if err != nil {
		return err
	}
	defer rc.Close()
	if t.tty {
		// A terminal merges the streams; the engine sends them raw.
		_, err = io.Copy(newStampStripper(stdout, mark, true), rc)
		return err
	}
	_, err = stdcopy.StdCopy(newStampStripper(stdout, mark, false), newStampStripper(stderr, mark, false), rc)
	return err
}

// logsSince is where a recovered task's output is followed from: just
// after the newest message copied before (the mark, see log_since.go), or
// for a task without one the last write to its log files, so lines
// written before the restart are not written twice.
func logsSince(tc *drivers.TaskConfig) time.Time {
	if mark := readSinceMark(tc.StdoutPrefix()); !mark.IsZero() {
		return mark
	}
	var last time.Time
	for _, prefix := range []string{tc.StdoutPrefix(), tc.StderrPrefix()} {
		live := prefix + "." + strconv.Itoa(fsutil.LatestLogIndex(prefix))
		if st, err := os.Stat(live); err == nil && st.ModTime().After(last) {
			last = st.ModTime()
		}
	}
	return last
}

// waitExit waits for the container to stop and records how it ended; the
// result is published once the output is written, so a reader of the
// logs after the exit sees all of it.
func (d *Driver) waitExit(t *task) {
	res := d.waitContainer(t.containerID)
	if res == nil {
		return // the driver shut down
	}
	select {
	case <-t.logsDone:
	case <-time.After(10 * time.Second):
		d.logger.Warn("container output still being followed after its exit", "container_id", shortID(t.containerID))
	}
	t.result = res
	close(t.done)
}

// waitContainer blocks until the container is not running and returns its
// exit, or nil once the driver shuts down. A lost connection to the
// engine is retried: the container runs on without the client.
func (d *Driver) waitContainer(id string) *drivers.ExitResult {
	backoff := 500 * time.Millisecond
	for {
		if d.ctx.Err() != nil {
			return nil
		}
		w := d.client.ContainerWait(d.ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
		var err error
		select {
		case <-w.Result:
		case err = <-w.Error:
		}
		if err == nil {
			return d.exitResult(id)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		insp, ierr := d.client.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		cancel()
		if notFound(ierr) {
			return &drivers.ExitResult{ExitCode: -1, Err: fmt.Errorf("docker: container %s is gone: %w", shortID(id), ierr)}
		}
		if ierr == nil && insp.Container.State != nil && !insp.Container.State.Running {
			return d.exitResult(id)
		}
		if d.ctx.Err() != nil {
			return nil
		}
		d.logger.Warn("waiting for container failed; retrying", "container_id", shortID(id), "error", err)
		select {
		case <-time.After(backoff):
		case <-d.ctx.Done():
			return nil
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

// exitResult reads a stopped container's exit code and OOM state.
func (d *Driver) exitResult(id string) *drivers.ExitResult {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	insp, err := d.client.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil || insp.Container.State == nil {
		return &drivers.ExitResult{ExitCode: -1, Err: fmt.Errorf("docker: inspect exited container %s: %v", shortID(id), err)}
	}
	st := insp.Container.State
	r := &drivers.ExitResult{ExitCode: st.ExitCode, OOMKilled: st.OOMKilled}
	if st.OOMKilled {
		r.Err = errors.New(drivers.OOMKilledMessage)
	}
	return r
}
