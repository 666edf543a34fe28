package agent

import (
	"net/http"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

func TestAgentPprof_OnlyWithEnableDebug(t *testing.T) {
	off := NewTestAgent(t, func(c *config.Config) { c.EnableDebug = false })
	_, err := apiClient(t, off).Agent().Lookup("goroutine", api.PprofOptions{}, nil)
	must.ErrorContains(t, err, "403")
	must.Eq(t, http.StatusForbidden, doRaw(t, off, http.MethodGet, "/v1/agent/host", "").StatusCode)
}

func TestAgentPprof_Profiles(t *testing.T) {
	a := NewTestAgent(t, nil) // -dev turns enable_debug on, as Nomad's
	ag := apiClient(t, a).Agent()

	cpu, err := ag.CPUProfile(api.PprofOptions{Seconds: 1}, nil)
	must.NoError(t, err)
	must.SliceNotEmpty(t, cpu)

	trace, err := ag.Trace(api.PprofOptions{Seconds: 1}, nil)
	must.NoError(t, err)
	must.SliceNotEmpty(t, trace)

	for _, name := range []string{"heap", "allocs", "goroutine", "threadcreate", "block", "mutex"} {
		out, err := ag.Lookup(name, api.PprofOptions{GC: 1}, nil)
		must.NoError(t, err, must.Sprint(name))
		must.SliceNotEmpty(t, out, must.Sprint(name))
	}
	text, err := ag.Lookup("goroutine", api.PprofOptions{Debug: 1}, nil)
	must.NoError(t, err)
	must.StrContains(t, string(text), "goroutine profile:")

	cmdline, err := ag.Lookup("cmdline", api.PprofOptions{}, nil)
	must.NoError(t, err)
	must.SliceNotEmpty(t, cmdline)

	_, err = ag.Lookup("invalid", api.PprofOptions{}, nil)
	must.ErrorContains(t, err, "Unexpected response code: 404")

	_, err = ag.CPUProfile(api.PprofOptions{Seconds: 1, ServerID: "unknown.global"}, nil)
	must.ErrorContains(t, err, "500 (unknown Nomad server unknown.global)")

	out, err := ag.Lookup("heap", api.PprofOptions{ServerID: a.config.Name + ".global"}, nil)
	must.NoError(t, err)
	must.SliceNotEmpty(t, out)

	must.Eq(t, http.StatusNotFound, doRaw(t, a, http.MethodGet, "/v1/agent/pprof/", "").StatusCode)
}
