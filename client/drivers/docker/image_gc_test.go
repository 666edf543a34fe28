package docker

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nomadq/nomadq/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// The reference counting and the delay, in fake time.
func TestImageGC_CountsAndDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var removed []string
		g := newImageGC(3*time.Minute, func(id string) {
			mu.Lock()
			removed = append(removed, id)
			mu.Unlock()
		})
		got := func() []string {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(removed)
		}
		g.acquire("a")
		g.acquire("a")
		g.acquire("b")
		g.release("a")
		time.Sleep(time.Hour)
		must.SliceEmpty(t, got(), must.Sprint("a is still used"))

		g.release("a")
		time.Sleep(2 * time.Minute)
		must.SliceEmpty(t, got(), must.Sprint("the delay is not up"))
		g.acquire("a") // needed again in time: kept
		time.Sleep(time.Hour)
		must.SliceEmpty(t, got())

		g.release("a")
		g.release("b")
		time.Sleep(3*time.Minute + time.Second)
		gone := got()
		slices.Sort(gone)
		must.Eq(t, []string{"a", "b"}, gone)

		g.acquire("c")
		g.release("c")
		g.stop()
		time.Sleep(time.Hour)
		must.Eq(t, 2, len(got()), must.Sprint("stop cancels pending removals"))
	})
}

// With the engine: an image is removed image_delay after its last task
// is destroyed, and kept while a task uses it.
func TestDriver_ImageGC(t *testing.T) {
	e := dockertest.Require(t)
	const image = "nomadq-test/gc:1"
	must.NoError(t, e.ImportImage(image))
	d := newDriver(t, e, map[string]any{"gc": map[string]any{"image": true, "image_delay": "200ms"}})
	exists := func() bool {
		_, err := e.Client.ImageInspect(context.Background(), image)
		return err == nil
	}
	long := newTask(t, map[string]any{"image": image, "command": "sleep", "args": []any{"600"}})
	_, err := d.StartTask(long)
	must.NoError(t, err)
	short := newTask(t, map[string]any{"image": image, "command": "true"})
	_, err = d.StartTask(short)
	must.NoError(t, err)
	waitExit(t, d, short.ID, time.Minute)
	must.NoError(t, d.DestroyTask(short.ID))
	// long still holds it; give the delay time to pass.
	must.Wait(t, wait.ContinualSuccess(wait.BoolFunc(exists), wait.Timeout(time.Second), wait.Gap(50*time.Millisecond)))

	must.NoError(t, d.DestroyTask(long.ID))
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return !exists() }), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)))
	res, err := e.Client.ImageInspect(context.Background(), dockertest.Image)
	must.NoError(t, err, must.Sprint("other images stay"))
	must.NotEq(t, "", res.ID)
}
