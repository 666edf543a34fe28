package docker

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/moby/moby/api/types/jsonstream"
	"github.com/shoenig/test/must"
)

const mib = 1 << 20

func layerMsg(id, status string, cur, total int64) jsonstream.Message {
	m := jsonstream.Message{ID: id, Status: status}
	if total > 0 {
		m.Progress = &jsonstream.Progress{Current: cur, Total: total}
	}
	return m
}

// The progress text is Nomad's: layers pulled, bytes, layers waiting and
// pulling, and an estimate from the rate so far.
func TestPullProgress_Summary(t *testing.T) {
	start := time.Unix(1000, 0)
	p := newPullProgress(start)
	must.Eq(t, "No progress", p.summary(start))

	p.observe(jsonstream.Message{Status: "Pulling from app", ID: "1"}, start)
	p.observe(layerMsg("a", "Pulling fs layer", 0, 0), start)
	p.observe(layerMsg("b", "Pulling fs layer", 0, 0), start)
	p.observe(layerMsg("c", "Already exists", 0, 0), start)
	must.Eq(t, "Pulled 1/3 (0B/0B) layers: 2 waiting/0 pulling", p.summary(start))

	p.observe(layerMsg("a", "Downloading", 2*mib, 8*mib), start.Add(2*time.Second))
	p.observe(layerMsg("b", "Downloading", 1*mib, 2*mib), start.Add(2*time.Second))
	// 3 MiB in 3 s: the 7 MiB left take 7 s more.
	must.Eq(t, "Pulled 1/3 (3MiB/10MiB) layers: 0 waiting/2 pulling - est 7.0s remaining", p.summary(start.Add(3*time.Second)))

	p.observe(layerMsg("b", "Download complete", 0, 0), start.Add(4*time.Second))
	p.observe(layerMsg("a", "Verifying Checksum", 0, 0), start.Add(4*time.Second))
	must.Eq(t, "Pulled 2/3 (4MiB/10MiB) layers: 0 waiting/1 pulling - est 6.0s remaining", p.summary(start.Add(4*time.Second)))

	p.observe(layerMsg("a", "Download complete", 0, 0), start.Add(5*time.Second))
	p.observe(layerMsg("a", "Pull complete", 0, 0), start.Add(6*time.Second))
	must.Eq(t, "Pulled 3/3 (10MiB/10MiB) layers: 0 waiting/0 pulling", p.summary(start.Add(6*time.Second)))
}

// A report is due every two minutes, however often the pull is looked
// at; a pull quiet for longer than the activity timeout has stalled.
func TestPullProgress_Check(t *testing.T) {
	start := time.Unix(1000, 0)
	p := newPullProgress(start)
	var reports []time.Duration
	for at := 10 * time.Second; at <= 5*time.Minute; at += 10 * time.Second {
		now := start.Add(at)
		p.observe(layerMsg("a", "Downloading", int64(at/time.Second), 1000), now)
		stalled, report := p.check(now, time.Minute)
		must.False(t, stalled)
		if report != "" {
			must.StrHasPrefix(t, "Docker image pull progress: Pulled 0/1 ", report)
			reports = append(reports, at)
		}
	}
	must.Eq(t, []time.Duration{2 * time.Minute, 4 * time.Minute}, reports)

	quiet := start.Add(5 * time.Minute)
	stalled, _ := p.check(quiet.Add(time.Minute), time.Minute)
	must.False(t, stalled, must.Sprint("quiet for exactly the timeout"))
	stalled, _ = p.check(quiet.Add(time.Minute+time.Second), time.Minute)
	must.True(t, stalled)
}

// The watch sends the reports on its ticker while messages come, and
// cancels a pull that goes quiet for pull_activity_timeout; in fake time.
func TestPullWatch_ReportsAndCancelsInFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var reports []time.Duration
		start := time.Now()
		cancelled := make(chan time.Duration, 1)
		w := newPullWatch(3*time.Minute, func(msg string) {
			mu.Lock()
			reports = append(reports, time.Since(start))
			mu.Unlock()
		}, func() { cancelled <- time.Since(start) })
		done := make(chan struct{})
		defer close(done)
		go w.run(done)

		// Messages every 30 s for five minutes, then none.
		for i := range 10 {
			time.Sleep(30 * time.Second)
			w.observe(layerMsg("a", "Downloading", int64(i+1), 100))
		}
		at := <-cancelled
		mu.Lock()
		defer mu.Unlock()
		// A quiet pull is still reported on until it is given up.
		must.Eq(t, []time.Duration{2 * time.Minute, 4 * time.Minute, 6 * time.Minute, 8 * time.Minute}, reports)
		must.True(t, w.isStalled())
		// The last message came at 5m; the watch looks every 10 s and
		// gives up once it is quiet for more than 3m.
		must.Eq(t, 8*time.Minute+10*time.Second, at)
	})
}
