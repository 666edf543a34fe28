package mock

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/shoenig/test/must"
)

func TestMock_RunForExitCodeSignalAndStartBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := New()
		start := time.Now()
		_, err := d.StartTask(&drivers.TaskConfig{ID: "x", Config: map[string]any{
			"run_for": "3s", "exit_code": int64(2), "exit_signal": int64(15), "start_block_for": "1s"}})
		must.NoError(t, err)
		must.Eq(t, time.Second, time.Since(start))
		ch, err := d.WaitTask(context.Background(), "x")
		must.NoError(t, err)
		r := <-ch
		must.Eq(t, 4*time.Second, time.Since(start))
		must.Eq(t, 2, r.ExitCode)
		must.Eq(t, 15, r.Signal)
		u, err := d.TaskStats("x")
		must.NoError(t, err)
		must.Eq(t, uint64(0), u.RSS)
	})
}

func TestMock_KillHonouredAfterKillAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := New()
		_, err := d.StartTask(&drivers.TaskConfig{ID: "x", Config: map[string]any{"run_for": "1h", "kill_after": "1s"}})
		must.NoError(t, err)
		ch, _ := d.WaitTask(context.Background(), "x")
		start := time.Now()
		must.NoError(t, d.StopTask("x", 5*time.Second, "SIGTERM"))
		r := <-ch
		must.Eq(t, time.Second, time.Since(start))
		must.Eq(t, 15, r.Signal)
	})
}

func TestMock_Validation(t *testing.T) {
	d := New()
	must.ErrorContains(t, d.ValidateConfig(map[string]any{"sleep": "1s"}), `unsupported config key "sleep"`)
	must.ErrorContains(t, d.ValidateConfig(map[string]any{"run_for": "soon"}), `"run_for"`)
	_, err := d.StartTask(&drivers.TaskConfig{ID: "y", Config: map[string]any{"start_error": "nope"}})
	must.EqError(t, err, "nope")
	must.Error(t, d.RecoverTask(&drivers.TaskHandle{Config: &drivers.TaskConfig{ID: "z"}}))
}
