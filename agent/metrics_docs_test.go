package agent

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

// Every series family a scrape shows is listed on website/metrics.md,
// with its type.
func TestMetrics_DocsListEverySeries(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "website", "metrics.md"))
	must.NoError(t, err)
	a := NewTestAgent(t, func(c *config.Config) { c.Telemetry.DisableHostname = true })
	c := apiClient(t, a)
	job := mockJob("docs", 1)
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "30s"}
	limit := 3 * time.Second
	job.TaskGroups[0].MaxRunDuration = &limit
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)
	waitAllocStatus(t, c, "docs", "running", 15*time.Second)

	families := map[string]string{}
	read := func() {
		resp, err := http.Get(a.HTTPAddr() + "/v1/metrics?format=prometheus")
		must.NoError(t, err)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
				families[f[2]] = f[3]
			}
		}
		must.NoError(t, sc.Err())
	}
	read() // while the alloc runs: its per-alloc gauges
	waitAllocStatus(t, c, "docs", "complete", 15*time.Second)
	read()

	must.MapContainsKey(t, families, "nomad_client_allocs_max_run_duration_remaining_seconds")
	for name, typ := range families {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue
		}
		row := "| `" + name + "` | " + typ + " |"
		must.StrContains(t, string(page), row, must.Sprintf("website/metrics.md does not list %s (%s)", name, typ))
	}
	must.StrContains(t, string(page), "`go_*` and `process_*`")
}
