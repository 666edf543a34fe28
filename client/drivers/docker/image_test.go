package docker

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// events collects a task's driver messages as a task runner would.
type events struct {
	mu   sync.Mutex
	msgs []string
	imgs []string
}

func (ev *events) emit(msg string, details map[string]string) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.msgs = append(ev.msgs, msg)
	ev.imgs = append(ev.imgs, details["image"])
}

func (ev *events) get() []string {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return append([]string(nil), ev.msgs...)
}

// An image only the registry has is pulled and runs, with Nomad's
// "Downloading image" event and then the pulled one; a second task of
// the same image starts from the engine's copy, without another pull
// and without those events.
func TestDriver_PullsMissingImage(t *testing.T) {
	e := dockertest.Require(t)
	reg := dockertest.NewRegistry(t, "", "")
	d := newDriver(t, e, nil)
	image := reg.Publish(t, e, "pulled/plain:1")
	var asked int64
	for i := range 2 {
		tc := newTask(t, map[string]any{"image": image, "command": "echo", "args": []any{"pulled"}})
		var ev events
		tc.Emit = ev.emit
		_, err := d.StartTask(tc)
		must.NoError(t, err)
		res := waitExit(t, d, tc.ID, time.Minute)
		must.True(t, res.Successful(), must.Sprintf("%+v", res))
		must.Eq(t, "pulled\n", readLog(t, tc, tc.StdoutPrefix()))
		must.NoError(t, d.DestroyTask(tc.ID))
		if i == 0 {
			asked = reg.Manifests()
			must.Positive(t, asked)
			must.Eq(t, []string{"Downloading image", "Image " + image + " pulled"}, ev.get())
			must.Eq(t, []string{image, image}, ev.imgs)
		} else {
			must.SliceEmpty(t, ev.get(), must.Sprint("the engine has the image: no pull"))
		}
		must.Eq(t, asked, reg.Manifests(), must.Sprintf("run %d: the engine has the image", i))
	}

	// force_pull pulls even so.
	tc := newTask(t, map[string]any{"image": image, "command": "true", "force_pull": true})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	must.True(t, waitExit(t, d, tc.ID, time.Minute).Successful())
	must.NoError(t, d.DestroyTask(tc.ID))
	must.Greater(t, asked, reg.Manifests(), must.Sprint("force_pull asks the registry"))
}

// A registry behind htpasswd gets the task's auth block; a wrong password
// or none fails the start with an error naming the image and saying the
// registry refused the credentials, after one pull.
func TestDriver_PullWithAuth(t *testing.T) {
	e := dockertest.Require(t)
	reg := dockertest.NewRegistry(t, "robot", "s3cret")
	d := newDriver(t, e, nil)
	image := reg.Publish(t, e, "private/app:1")

	bad := newTask(t, map[string]any{"image": image, "command": "true",
		"auth": map[string]any{"username": "robot", "password": "wrong"}})
	var ev events
	bad.Emit = ev.emit
	_, errBad := d.StartTask(bad)
	must.ErrorContains(t, errBad, `pull image "`+image+`": authentication failed`)
	var rec recoverableError
	must.False(t, errors.As(errBad, &rec), must.Sprint("a refused password is refused again: not recoverable"))
	must.Eq(t, 0, containersOf(t, e, bad.AllocID, true))
	must.Eq(t, []string{"Downloading image"}, ev.get())
	must.Positive(t, reg.Manifests(), must.Sprint("the registry was asked, and refused"))

	none := newTask(t, map[string]any{"image": image, "command": "true"})
	_, err := d.StartTask(none)
	must.ErrorContains(t, err, `pull image "`+image+`": authentication failed`)
	t.Logf("refused with a wrong password: %v", errBad)
	t.Logf("refused without credentials: %v", err)

	good := newTask(t, map[string]any{"image": image, "command": "echo", "args": []any{"authed"},
		"auth": []any{map[string]any{"username": "robot", "password": "s3cret"}}})
	var okEv events
	good.Emit = okEv.emit
	_, err = d.StartTask(good)
	must.NoError(t, err)
	must.True(t, waitExit(t, d, good.ID, time.Minute).Successful())
	must.Eq(t, "authed\n", readLog(t, good, good.StdoutPrefix()))
	must.Eq(t, []string{"Downloading image", "Image " + image + " pulled"}, okEv.get())
	must.NoError(t, d.DestroyTask(good.ID))

	// An image the registry does not have says so.
	missing := newTask(t, map[string]any{"image": reg.Addr + "/private/none:1", "command": "true",
		"auth": map[string]any{"username": "robot", "password": "s3cret"}})
	_, err = d.StartTask(missing)
	must.ErrorContains(t, err, `pull image "`+reg.Addr+`/private/none:1": image not found`)
	must.False(t, errors.As(err, &rec), must.Sprint("a missing image stays missing: not recoverable"))
}

// Tasks that need an image while it is being pulled wait for that pull
// and hear its events: the registry is asked fewer times than there are
// tasks (each pull of the engine asks at least once).
func TestDriver_ConcurrentStartsPullOnce(t *testing.T) {
	e := dockertest.Require(t)
	reg := dockertest.NewRegistry(t, "", "")
	reg.Publish(t, e, "shared/app:1")
	gate := reg.Gate(t)
	d := newDriver(t, e, nil)
	gate.Hold()
	image := gate.Addr + "/shared/app:1"
	tasks := make([]*drivers.TaskConfig, 3)
	evs := make([]events, len(tasks))
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i := range tasks {
		tasks[i] = newTask(t, map[string]any{"image": image, "command": "true"})
		tasks[i].Emit = evs[i].emit
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = d.StartTask(tasks[i])
		}()
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return gate.Manifests.Load() >= 1 && d.pulls.waiting(image) == len(tasks)-1
	}), wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)))
	gate.Release()
	wg.Wait()
	for i, tc := range tasks {
		must.NoError(t, errs[i])
		must.True(t, waitExit(t, d, tc.ID, time.Minute).Successful())
		must.NoError(t, d.DestroyTask(tc.ID))
		must.Eq(t, []string{"Downloading image", "Image " + image + " pulled"}, evs[i].get())
	}
	must.Less(t, int64(len(tasks)), gate.Manifests.Load())
}

// Credentials from the plugin's auth.config file and auth.helper, and a
// lookup that fails: the start fails, unless auth_soft_fail.
func TestDriver_PluginAuth(t *testing.T) {
	e := dockertest.Require(t)
	reg := dockertest.NewRegistry(t, "robot", "s3cret")
	reg.Publish(t, e, "from/config:1")
	reg.Publish(t, e, "from/helper:1")
	dir := t.TempDir()

	cfgFile := filepath.Join(dir, "config.json")
	must.NoError(t, os.WriteFile(cfgFile, []byte(`{"auths":{"`+reg.Addr+`":{"auth":"`+
		base64.StdEncoding.EncodeToString([]byte("robot:s3cret"))+`"}}}`), 0o600))
	d := newDriver(t, e, map[string]any{"auth": map[string]any{"config": cfgFile}})
	tc := newTask(t, map[string]any{"image": reg.Addr + "/from/config:1", "command": "true"})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	must.True(t, waitExit(t, d, tc.ID, time.Minute).Successful())
	must.NoError(t, d.DestroyTask(tc.ID))

	// A credential helper on PATH.
	helper := filepath.Join(dir, "docker-credential-nqtest")
	must.NoError(t, os.WriteFile(helper, []byte("#!/bin/sh\nread reg\n[ \"$reg\" = \""+reg.Addr+"\" ] || exit 3\n"+
		`echo '{"Username":"robot","Secret":"s3cret"}'`+"\n"), 0o755))
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	dh := newDriver(t, e, map[string]any{"auth": map[string]any{"helper": "nqtest"}})
	th := newTask(t, map[string]any{"image": reg.Addr + "/from/helper:1", "command": "true"})
	_, err = dh.StartTask(th)
	must.NoError(t, err)
	must.True(t, waitExit(t, dh, th.ID, time.Minute).Successful())
	must.NoError(t, dh.DestroyTask(th.ID))

	// A config file that is not there fails the lookup.
	public := dockertest.NewRegistry(t, "", "")
	public.Publish(t, e, "lookup/fails:1")
	dm := newDriver(t, e, map[string]any{"auth": map[string]any{"config": filepath.Join(dir, "missing.json")}})
	tm := newTask(t, map[string]any{"image": public.Addr + "/lookup/fails:1", "command": "true"})
	_, err = dm.StartTask(tm)
	must.ErrorContains(t, err, "find registry credentials")
	ts := newTask(t, map[string]any{"image": public.Addr + "/lookup/fails:1", "command": "true", "auth_soft_fail": true})
	_, err = dm.StartTask(ts)
	must.NoError(t, err, must.Sprint("auth_soft_fail pulls without credentials"))
	must.True(t, waitExit(t, dm, ts.ID, time.Minute).Successful())
	must.NoError(t, dm.DestroyTask(ts.ID))
}

// The engine's refusals are told apart by their words, since an engine
// hands most registry errors back as a plain 500.
func TestPullError(t *testing.T) {
	for _, tc := range []struct {
		engine      string
		want        string
		recoverable bool
	}{
		{"Error response from daemon: unauthorized: authentication required", "authentication failed: ", false},
		{`Error response from daemon: Head "http://r/v2/a/manifests/1": no basic auth credentials`, "authentication failed: ", false},
		{"Error response from daemon: pull access denied for app, repository does not exist or may require 'docker login'", "authentication failed: ", false},
		{"Error response from daemon: manifest for r/a:1 not found: manifest unknown: manifest unknown", "image not found: ", false},
		{`Error response from daemon: Get "http://r/v2/": dial tcp r:443: connect: connection refused`, "", true},
		{"Error response from daemon: received unexpected HTTP status: 503 Service Unavailable", "", true},
	} {
		err := pullError("r/a:1", errors.New(tc.engine))
		must.EqError(t, err, `docker: pull image "r/a:1": `+tc.want+tc.engine)
		var rec recoverableError
		must.Eq(t, tc.recoverable, errors.As(err, &rec), must.Sprint(tc.engine))
	}
}
