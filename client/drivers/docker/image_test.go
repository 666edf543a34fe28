package docker

import (
	"encoding/base64"
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

// An image only a registry has is pulled and runs; a second task of the
// same image starts from the engine's copy, without another pull.
func TestDriver_PullsMissingImage(t *testing.T) {
	e := dockertest.Require(t)
	reg := dockertest.NewRegistry(t, "", "")
	d := newDriver(t, e, nil)
	image := reg.Addr + "/pulled/plain:1"
	var asked int64
	for i := range 2 {
		tc := newTask(t, map[string]any{"image": image, "command": "echo", "args": []any{"pulled"}})
		_, err := d.StartTask(tc)
		must.NoError(t, err)
		res := waitExit(t, d, tc.ID, time.Minute)
		must.True(t, res.Successful(), must.Sprintf("%+v", res))
		must.Eq(t, "pulled\n", readLog(t, tc, tc.StdoutPrefix()))
		must.NoError(t, d.DestroyTask(tc.ID))
		if i == 0 {
			asked = reg.Manifests.Load()
			must.Positive(t, asked)
		}
		must.Eq(t, asked, reg.Manifests.Load(), must.Sprintf("run %d: the engine has the image", i))
	}

	// force_pull pulls even so.
	tc := newTask(t, map[string]any{"image": image, "command": "true", "force_pull": true})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	must.True(t, waitExit(t, d, tc.ID, time.Minute).Successful())
	must.NoError(t, d.DestroyTask(tc.ID))
	must.Greater(t, asked, reg.Manifests.Load(), must.Sprint("force_pull asks the registry"))
}

// A registry that asks for credentials gets the task's auth block; a
// wrong password fails the start with the registry's answer.
func TestDriver_PullWithAuth(t *testing.T) {
	e := dockertest.Require(t)
	reg := dockertest.NewRegistry(t, "robot", "s3cret")
	d := newDriver(t, e, nil)

	bad := newTask(t, map[string]any{"image": reg.Addr + "/private/app:1", "command": "true",
		"auth": map[string]any{"username": "robot", "password": "wrong"}})
	_, err := d.StartTask(bad)
	must.ErrorContains(t, err, `pull image "`+reg.Addr+`/private/app:1"`)
	must.Eq(t, 0, containersOf(t, e, bad.AllocID, true))

	none := newTask(t, map[string]any{"image": reg.Addr + "/private/app:1", "command": "true"})
	_, err = d.StartTask(none)
	must.ErrorContains(t, err, "pull image")

	good := newTask(t, map[string]any{"image": reg.Addr + "/private/app:1", "command": "echo", "args": []any{"authed"},
		"auth": []any{map[string]any{"username": "robot", "password": "s3cret"}}})
	_, err = d.StartTask(good)
	must.NoError(t, err)
	must.True(t, waitExit(t, d, good.ID, time.Minute).Successful())
	must.Eq(t, "authed\n", readLog(t, good, good.StdoutPrefix()))
	must.NoError(t, d.DestroyTask(good.ID))
}

// Tasks that need an image while it is being pulled wait for that pull:
// the registry is asked fewer times than there are tasks (each pull of
// the engine asks at least once).
func TestDriver_ConcurrentStartsPullOnce(t *testing.T) {
	e := dockertest.Require(t)
	reg := dockertest.NewRegistry(t, "", "")
	d := newDriver(t, e, nil)
	reg.Hold()
	image := reg.Addr + "/shared/app:1"
	tasks := make([]*drivers.TaskConfig, 3)
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i := range tasks {
		tasks[i] = newTask(t, map[string]any{"image": image, "command": "true"})
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = d.StartTask(tasks[i])
		}()
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return reg.Manifests.Load() >= 1 && d.pulls.waiting(image) == len(tasks)-1
	}), wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)))
	reg.Release()
	wg.Wait()
	for i, tc := range tasks {
		must.NoError(t, errs[i])
		must.True(t, waitExit(t, d, tc.ID, time.Minute).Successful())
		must.NoError(t, d.DestroyTask(tc.ID))
	}
	must.Less(t, int64(len(tasks)), reg.Manifests.Load())
}

// Credentials from the plugin's auth.config file and auth.helper, and a
// lookup that fails: the start fails, unless auth_soft_fail.
func TestDriver_PluginAuth(t *testing.T) {
	e := dockertest.Require(t)
	reg := dockertest.NewRegistry(t, "robot", "s3cret")
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
