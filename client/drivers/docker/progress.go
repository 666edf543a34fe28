package docker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	units "github.com/docker/go-units"
	"github.com/moby/moby/api/types/jsonstream"
)

// Nomad's cadence for a pull: the pull is looked at every
// pullCheckInterval (or more often when pull_activity_timeout is short),
// and a progress event goes to the tasks waiting for it once every
// pullReportInterval, so a slow pull shows in the task's events without
// flooding them.
const (
	pullCheckInterval  = 10 * time.Second
	pullReportInterval = 2 * time.Minute
)

// layerStatus is how far the engine got with one layer of a pull, in the
// order the engine goes through them.
type layerStatus int

const (
	layerUnknown layerStatus = iota
	layerStarting
	layerWaiting
	layerDownloading
	layerVerifying
	layerDownloaded
	layerExtracting
	layerComplete
	layerExists
)

// layerStatuses are the engine's status texts for a layer.
var layerStatuses = map[string]layerStatus{
	"Pulling fs layer":   layerStarting,
	"Waiting":            layerWaiting,
	"Downloading":        layerDownloading,
	"Verifying Checksum": layerVerifying,
	"Download complete":  layerDownloaded,
	"Extracting":         layerExtracting,
	"Pull complete":      layerComplete,
	"Already exists":     layerExists,
}

type layerProgress struct {
	status         layerStatus
	current, total int64
}

// pullProgress is what the engine said so far about one pull. It is a
// pure record: the caller passes the time, so its wording and decisions
// are tested without a clock.
type pullProgress struct {
	start      time.Time
	last       time.Time // the engine's last message, or the start
	lastReport time.Time
	seen       bool
	layers     map[string]*layerProgress
}

func newPullProgress(now time.Time) *pullProgress {
	return &pullProgress{start: now, last: now, lastReport: now, layers: make(map[string]*layerProgress)}
}

// observe records one message of the engine's pull stream.
func (p *pullProgress) observe(msg jsonstream.Message, now time.Time) {
	p.last, p.seen = now, true
	st, ok := layerStatuses[msg.Status]
	if !ok || msg.ID == "" {
		return
	}
	l := p.layers[msg.ID]
	if l == nil {
		l = &layerProgress{}
		p.layers[msg.ID] = l
	}
	l.status = st
	switch {
	case st == layerDownloading && msg.Progress != nil:
		l.current, l.total = msg.Progress.Current, msg.Progress.Total
	case st == layerDownloaded:
		l.current = l.total
	}
}

// summary words the pull's progress as Nomad does: "Pulled 1/3
// (2.5MiB/10MiB) layers: 1 waiting/1 pulling - est 6.0s remaining".
func (p *pullProgress) summary(now time.Time) string {
	if !p.seen {
		return "No progress"
	}
	var pulled, pulling, waiting int
	var cur, total int64
	for _, l := range p.layers {
		switch {
		case l.status == layerStarting || l.status == layerWaiting:
			waiting++
		case l.status == layerDownloading || l.status == layerVerifying:
			pulling++
		case l.status >= layerDownloaded:
			pulled++
		}
		cur += l.current
		total += l.total
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Pulled %d/%d (%s/%s) layers: %d waiting/%d pulling",
		pulled, len(p.layers), units.BytesSize(float64(cur)), units.BytesSize(float64(total)), waiting, pulling)
	if elapsed := now.Sub(p.start); cur > 0 && total > cur {
		left := time.Duration(float64(elapsed) * float64(total-cur) / float64(cur))
		fmt.Fprintf(&b, " - est %.1fs remaining", left.Seconds())
	}
	return b.String()
}

// check decides, at now, whether the pull has gone quiet for longer than
// activityTimeout and whether a progress report is due (report is then
// its text, else "").
func (p *pullProgress) check(now time.Time, activityTimeout time.Duration) (stalled bool, report string) {
	if now.Sub(p.last) > activityTimeout {
		return true, ""
	}
	if now.Sub(p.lastReport) >= pullReportInterval {
		p.lastReport = now
		return false, "Docker image pull progress: " + p.summary(now)
	}
	return false, ""
}

// pullWatch is the shell around a pullProgress: it records the engine's
// messages as they come and, on a ticker, cancels a pull that went quiet
// and sends the progress reports.
type pullWatch struct {
	activity time.Duration
	emit     func(string)
	cancel   context.CancelFunc

	mu       sync.Mutex
	progress *pullProgress
	stalled  bool
}

func newPullWatch(activity time.Duration, emit func(string), cancel context.CancelFunc) *pullWatch {
	return &pullWatch{activity: activity, emit: emit, cancel: cancel, progress: newPullProgress(time.Now())}
}

// observe records a message of the pull stream.
func (w *pullWatch) observe(msg jsonstream.Message) {
	w.mu.Lock()
	w.progress.observe(msg, time.Now())
	w.mu.Unlock()
}

// isStalled reports whether run cancelled the pull for inactivity.
func (w *pullWatch) isStalled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stalled
}

// summary words the progress so far.
func (w *pullWatch) summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.progress.summary(time.Now())
}

// run watches until done is closed or the pull stalls.
func (w *pullWatch) run(done <-chan struct{}) {
	t := time.NewTicker(min(pullCheckInterval, max(w.activity/10, 100*time.Millisecond)))
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		w.mu.Lock()
		stalled, report := w.progress.check(time.Now(), w.activity)
		w.stalled = w.stalled || stalled
		w.mu.Unlock()
		if stalled {
			w.cancel()
			return
		}
		if report != "" {
			w.emit(report)
		}
	}
}
