package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// The api module's TaskGroup has no MaxRunDurationWarning, so decoding a
// job into api.Job drops it. The job handlers keep a copy of the body
// (teeBody) and read the field from it here, by group name, onto the
// converted job.

// warningBody is the part of a job request that carries the warnings:
// TaskGroups[].MaxRunDurationWarning {Before (ns), Signal}.
type warningBody struct {
	Job *struct {
		TaskGroups []struct {
			Name                  *string
			MaxRunDurationWarning *struct {
				Before *int64
				Signal *string
			}
		}
	}
}

// teeBody makes r's body also write into the returned buffer as the
// handler reads it.
func teeBody(r *http.Request) *bytes.Buffer {
	var buf bytes.Buffer
	if r.Body != nil {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(r.Body, &buf), r.Body}
	}
	return &buf
}

// applyMaxRunWarnings copies the groups' max_run_duration_warning from
// the raw job request body onto job. The error names the group and the
// field of a malformed warning; the handlers answer it with a 400.
func applyMaxRunWarnings(raw []byte, job *structs.Job) error {
	// JSON field names match in any case, as api.Job's do.
	if job == nil || !bytes.Contains(bytes.ToLower(raw), []byte("maxrundurationwarning")) {
		return nil
	}
	var body warningBody
	if err := json.Unmarshal(raw, &body); err != nil {
		return fmt.Errorf("TaskGroups[].MaxRunDurationWarning must be an object {\"Before\": nanoseconds, \"Signal\": \"SIGUSR1\"}: %v", err)
	}
	if body.Job == nil {
		return nil
	}
	for _, g := range body.Job.TaskGroups {
		w := g.MaxRunDurationWarning
		if w == nil || g.Name == nil {
			continue
		}
		tg := job.LookupTaskGroup(*g.Name)
		if tg == nil {
			continue
		}
		out := &structs.MaxRunDurationWarning{}
		if w.Before != nil {
			out.Before = time.Duration(*w.Before)
		}
		if w.Signal != nil {
			out.Signal = *w.Signal
		}
		if err := structs.ValidateMaxRunDurationWarning(out, tg.MaxRunDuration); err != nil {
			return fmt.Errorf("Task group %q: %v", tg.Name, err)
		}
		tg.MaxRunDurationWarning = out
	}
	return nil
}
