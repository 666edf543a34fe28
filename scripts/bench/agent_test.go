package main

import (
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// The tail of a debug=1 heap profile, as the runtime writes it.
const memStatsTail = `heap profile: 3: 1024 [9: 4096] @ heap/1048576
# runtime.MemStats
# Alloc = 10017984
# TotalAlloc = 1234567890
# Sys = 113727784
# HeapAlloc = 10017984
# HeapSys = 100859904
# HeapInuse = 18587648
# Stack = 2457600 / 2457600
# MSpan = 297760 / 1713600
`

func TestParseMemStats(t *testing.T) {
	mem, err := parseMemStats(memStatsTail)
	must.NoError(t, err)
	must.Eq(t, goMem{HeapAlloc: 10017984, StackInuse: 2457600}, mem)
	_, err = parseMemStats(strings.ReplaceAll(memStatsTail, "# Stack", "# Stuck"))
	must.ErrorContains(t, err, "no HeapAlloc or Stack")
}

func TestParseClientAllocs(t *testing.T) {
	raw := []byte(`{"Gauges":[
		{"Name":"nomad.client.allocations.pending","Value":1,"Labels":{"node_id":"n"}},
		{"Name":"nomad.client.allocations.running","Value":2},
		{"Name":"nomad.client.allocations.terminal","Value":30},
		{"Name":"nomad.broker.total_ready","Value":400}]}`)
	n, err := parseClientAllocs(raw)
	if err != nil || n != 33 {
		t.Fatalf("got %d, %v; want 33 (pending + running + terminal)", n, err)
	}
	if _, err := parseClientAllocs([]byte(`{"Gauges":[{"Name":"nomad.broker.total_ready","Value":1}]}`)); err == nil {
		t.Error("no error for an agent without client gauges")
	}
}
