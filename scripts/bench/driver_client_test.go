package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// The driver's client keeps a connection for each request in flight: a
// second wave of 64 concurrent registrations reuses the first wave's
// connections. The api client's default pool (GOMAXPROCS+1 idle
// connections) opens most of them again.
func TestDriverHTTPClient_KeepsItsConnections(t *testing.T) {
	var opened atomic.Int64
	var gate atomic.Pointer[chan struct{}]
	var arrived sync.WaitGroup
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Hold each request until the whole wave is in flight, so the
		// wave needs 64 connections at once.
		g := *gate.Load()
		arrived.Done()
		<-g
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"EvalID":"","Index":1}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	const inFlight = 64
	wave := func(c *api.Client) int64 {
		before := opened.Load()
		g := make(chan struct{})
		gate.Store(&g)
		arrived.Add(inFlight)
		var done sync.WaitGroup
		errs := make([]error, inFlight)
		for i := range inFlight {
			done.Add(1)
			go func() {
				defer done.Done()
				_, _, errs[i] = c.Jobs().Register(mockBatchJob(fmt.Sprintf("j%d", i), 1, "1ms"), nil)
			}()
		}
		arrived.Wait()
		close(g)
		done.Wait()
		// Checked here: a failure may stop only the test's own goroutine.
		for _, err := range errs {
			must.NoError(t, err)
		}
		return opened.Load() - before
	}

	driver, err := api.NewClient(&api.Config{Address: srv.URL, HttpClient: driverHTTPClient()})
	must.NoError(t, err)
	must.Eq(t, inFlight, wave(driver))
	must.Eq(t, 0, wave(driver), must.Sprint("the second wave reuses the first one's connections"))

	plain, err := api.NewClient(&api.Config{Address: srv.URL})
	must.NoError(t, err)
	must.Eq(t, inFlight, wave(plain))
	must.Greater(t, inFlight/2, wave(plain), must.Sprint("the default pool keeps only a few connections"))
}
