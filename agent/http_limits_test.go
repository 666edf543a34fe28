package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

// TestHTTP_LimitsRefuseBeforeWork sends what is over each request limit
// and checks the 4xx that names it, and that nothing was stored.
func TestHTTP_LimitsRefuseBeforeWork(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.MaxRequestBody = 512 << 10 })
	base := a.HTTPAddr()

	bigMeta := make(map[string]string, 10_000)
	for i := range 10_000 {
		bigMeta[fmt.Sprintf("k%05d", i)] = "v"
	}
	metaJob := mockJob("meta", 1)
	metaJob.Meta = bigMeta

	const depth = 5000
	deepHCL := "job \"deep\" {\n group \"g\" {\n task \"t\" {\n driver = \"mock_driver\"\n config {\n a = " +
		strings.Repeat("{a=", depth) + "1" + strings.Repeat("}", depth) + "\n}\n}\n}\n}\n"

	cases := []struct {
		name string
		path string
		body any
		code int
		msg  string
	}{
		{"body over http_max_request_bytes", "/v1/jobs", map[string]any{"Job": map[string]any{"ID": "big", "Meta": map[string]string{"k": strings.Repeat("x", 600<<10)}}},
			http.StatusRequestEntityTooLarge, "Request body too large: the limit is 524288 bytes (limits.http_max_request_bytes)"},
		{"10,000 meta keys", "/v1/jobs", map[string]any{"Job": metaJob}, http.StatusBadRequest, "10000 meta keys are not allowed: at most 1000"},
		{"HCL nested 5,000 levels", "/v1/jobs/parse", map[string]any{"JobHCL": deepHCL}, http.StatusBadRequest, "nest"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, _, body := httpPut(t, base+tc.path, tc.body)
			took := time.Since(start)
			must.Eq(t, tc.code, code, must.Sprint(body))
			must.StrContains(t, body, tc.msg)
			t.Logf("refused in %v", took.Round(time.Millisecond))
			// A generous ceiling: the point is that the refusal comes
			// before any work, which takes well under a second here.
			must.Less(t, 10*time.Second, took)
		})
	}
	var list []map[string]any
	resp, err := http.Get(base + "/v1/jobs")
	must.NoError(t, err)
	defer resp.Body.Close()
	must.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	must.SliceEmpty(t, list)
}
