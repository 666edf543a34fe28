package docker

import (
	"sync"
	"time"
)

// imageGC counts the driver's tasks per image and removes an image once
// no task has used it for the plugin's gc.image_delay, as Nomad's image
// coordinator does. A task that needs the image again before the delay
// is up keeps it. Counts live in this process only: a restarted client
// counts again the tasks it re-attaches to.
type imageGC struct {
	delay  time.Duration
	remove func(imageID string)

	mu     sync.Mutex
	refs   map[string]int
	timers map[string]*time.Timer
}

func newImageGC(delay time.Duration, remove func(imageID string)) *imageGC {
	return &imageGC{delay: delay, remove: remove, refs: make(map[string]int), timers: make(map[string]*time.Timer)}
}

// acquire counts a task using the image and cancels a pending removal.
func (g *imageGC) acquire(imageID string) {
	if imageID == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refs[imageID]++
	if t, ok := g.timers[imageID]; ok {
		t.Stop()
		delete(g.timers, imageID)
	}
}

// release uncounts a task; the last one schedules the image's removal.
func (g *imageGC) release(imageID string) {
	if imageID == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refs[imageID] <= 1 {
		delete(g.refs, imageID)
	} else {
		g.refs[imageID]--
		return
	}
	if _, ok := g.timers[imageID]; ok {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(g.delay, func() {
		g.mu.Lock()
		// A task took the image again, or a newer timer replaced this one.
		if g.timers[imageID] != t || g.refs[imageID] > 0 {
			g.mu.Unlock()
			return
		}
		delete(g.timers, imageID)
		g.mu.Unlock()
		g.remove(imageID)
	})
	g.timers[imageID] = t
}

// stop cancels pending removals (the driver shuts down).
func (g *imageGC) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for id, t := range g.timers {
		t.Stop()
		delete(g.timers, id)
	}
}
