package command

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

func TestVarLock(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) { c.Client.Enabled = false })
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)

	t.Run("runs the child under the lock and exits with its code", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "var", "lock", "-ttl", "10s", "app/lock", "echo locked; exit 3")
		must.Eq(t, 3, code, must.Sprint(errOut))
		must.Eq(t, "locked\n", out)
		v, _, err := c.Variables().Read("app/lock", nil)
		must.NoError(t, err)
		must.Nil(t, v.Lock, must.Sprint("the lock is released when the child exits"))
	})
	t.Run("-shell=false runs the child directly", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "var", "lock", "-shell=false", "app/lock", "echo", "a;b")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, "a;b\n", out)
	})

	// Someone else holds the lock.
	locks, err := c.Locks(api.WriteOptions{}, api.Variable{Path: "app/lock",
		Lock: &api.VariableLock{TTL: "10s", LockDelay: "1ms"}})
	must.NoError(t, err)
	_, err = locks.Acquire(context.Background())
	must.NoError(t, err)

	t.Run("-early-return does not wait for a held lock", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "var", "lock", "-early-return", "app/lock", "echo ran")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, "", out)
	})
	t.Run("waits until the lock is released", func(t *testing.T) {
		var (
			wg          sync.WaitGroup
			code        int
			out, errOut string
		)
		start := time.Now()
		wg.Go(func() {
			code, out, errOut = cli(t, addr, "var", "lock", "-backoff", "50ms", "app/lock", "echo got it")
		})
		time.Sleep(300 * time.Millisecond)
		must.NoError(t, locks.Release(context.Background()))
		wg.Wait()
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, "got it\n", out)
		must.Greater(t, 300*time.Millisecond, time.Since(start))
	})
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no child", []string{"app/lock"}, "Not enough arguments"},
		{"bad ttl", []string{"-ttl", "soon", "app/lock", "true"}, `Invalid -ttl "soon"`},
		{"bad delay", []string{"-delay", "-1s", "app/lock", "true"}, `Invalid -delay "-1s"`},
		{"wildcard namespace", []string{"-namespace", "*", "app/lock", "true"}, "wildcard namespace"},
		{"missing spec", []string{"@nope.hcl", "true"}, `Error reading "nope.hcl"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := cli(t, addr, append([]string{"var", "lock"}, tc.args...)...)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, tc.wantErr)
		})
	}
}
