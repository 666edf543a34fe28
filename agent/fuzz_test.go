package agent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/internal/fuzzpath"
	"github.com/nomadq/nomadq/jobspec"
	"github.com/nomadq/nomadq/structs"
)

// FuzzJobRegisterBody feeds request bodies to the decode and conversion
// path of PUT /v1/jobs: decodeBody into api.JobRegisterRequest, then the
// namespace rule and apiJobToStruct, as jobRegister runs them before its
// RPC. Whatever the body, the answer is a job or a coded error, never a
// panic; a job it accepts can be written to the Raft log and read back.
func FuzzJobRegisterBody(f *testing.F) {
	for _, body := range exampleJobBodies(f) {
		f.Add(body)
	}
	for _, body := range []string{
		`{"Job": {`,
		`{"Submission": null}`,
		`{"Job": {"Name": "x"}}`,
		`{"Job": {"ID": "x", "Type": "batch", "TaskGroups": [null]}}`,
		`{"Job": {"ID": "x", "Type": "batch", "Meta": {"k": "v"}, "TaskGroups": [{"Name": "g", "Count": 1, "Tasks": [{"Name": "t", "Driver": "raw_exec", "Config": {"command": "true", "args": [1, 2.5, {"a": null}]}}]}]}, "EnforceIndex": true, "JobModifyIndex": 7}`,
		`{"Job": {"ID": "x", "Type": "sysbatch", "TaskGroups": [{"Name": "g", "MaxRunDuration": 1000000000, "Tasks": [{"Name": "t", "Driver": "mock_driver", "Resources": {"CPU": 100, "MemoryMB": 64}}]}]}, "EvalPriority": 50}`,
		`null`,
	} {
		f.Add([]byte(body))
	}

	f.Fuzz(checkJobRegisterBody)
}

// checkJobRegisterBody runs body through what jobRegister does before its
// RPC and checks the answer.
func checkJobRegisterBody(t *testing.T, body []byte) {
	r := httptest.NewRequest(http.MethodPut, "/v1/jobs", bytes.NewReader(body))
	var req api.JobRegisterRequest
	if err := decodeBody(r, &req); err != nil {
		mustBeCoded(t, err)
		return
	}
	if req.Job == nil {
		return
	}
	setJobNamespace(r, req.Job, req.Namespace)
	job, _, err := apiJobToStruct(req.Job)
	if err != nil {
		mustBeCoded(t, err)
		return
	}
	buf, err := structs.Encode(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	if err != nil {
		t.Fatalf("an accepted job cannot be encoded for Raft: %v", err)
	}
	var back structs.JobRegisterRequest
	if err := structs.Decode(buf[1:], &back); err != nil {
		t.Fatalf("an accepted job does not decode from Raft: %v", err)
	}
	if back.Job == nil || back.Job.ID != job.ID {
		t.Fatalf("an accepted job read back from Raft as %#v", back.Job)
	}
}

// FuzzJobRegisterField is FuzzJobRegisterBody with the JSON kept whole:
// it sets one field of an example job, named by a dotted path
// ("TaskGroups.0.Tasks.0.Resources"), to a fuzzed value (JSON when it
// parses as JSON, a string otherwise), so that the fuzzer spends its time
// on values the decoder accepts and the conversion and validation see.
func FuzzJobRegisterField(f *testing.F) {
	jobs := exampleJobBodies(f)
	for _, seed := range []struct{ path, value string }{
		{"Type", `"sysbatch"`},
		{"Type", `"service"`},
		{"TaskGroups.0.Count", `-1`},
		{"TaskGroups.0", `null`},
		{"TaskGroups.0.Tasks", `null`},
		{"TaskGroups.0.Tasks.0", `{}`},
		{"TaskGroups.0.Tasks.0.Resources", `null`},
		{"TaskGroups.0.Tasks.0.Resources.Networks", `[null]`},
		{"TaskGroups.0.Tasks.0.Config", `{"command": ["a", {"b": null}]}`},
		{"TaskGroups.0.Tasks.0.Templates", `[{"EmbeddedTmpl": "x", "DestPath": "local/x"}]`},
		{"TaskGroups.0.Tasks.0.Artifacts", `[{}]`},
		{"TaskGroups.0.Tasks.0.Lifecycle", `{"Hook": "prestart"}`},
		{"TaskGroups.0.Tasks.0.Services", `[{"Name": "s", "Checks": [{}]}]`},
		{"TaskGroups.0.Networks", `[{"DynamicPorts": [{"Label": "http"}], "ReservedPorts": [{"Label": "x", "Value": 70000}]}]`},
		{"TaskGroups.0.Volumes", `{"v": {"Type": "host", "Source": "s"}}`},
		{"TaskGroups.0.MaxRunDuration", `0`},
		{"TaskGroups.0.ReschedulePolicy", `{"Unlimited": true, "Attempts": -1}`},
		{"TaskGroups.0.RestartPolicy", `{"Mode": "x"}`},
		{"TaskGroups.0.Update", `{"MaxParallel": 0}`},
		{"TaskGroups.0.Spreads", `[{"Attribute": "${node.datacenter}", "SpreadTarget": [{"Value": "a", "Percent": 200}]}]`},
		{"TaskGroups.0.EphemeralDisk", `{"SizeMB": -5}`},
		{"Constraints", `[{"Operand": "regexp", "RTarget": "("}]`},
		{"Affinities", `[{"LTarget": "${meta.a}", "Operand": "=", "Weight": 0}]`},
		{"Periodic", `{"Spec": "61 * * * *", "SpecType": "cron"}`},
		{"Periodic", `{"Specs": ["* * * * *"], "TimeZone": "Nowhere/City"}`},
		{"ParameterizedJob", `{"Payload": "required", "MetaRequired": ["a"]}`},
		{"Meta", `{"a": null}`},
		{"Priority", `1000`},
		{"Datacenters", `[]`},
		{"Multiregion", `{}`},
		{"ID", `""`},
	} {
		for i := range jobs {
			f.Add(uint8(i), seed.path, []byte(seed.value))
		}
	}

	f.Fuzz(func(t *testing.T, which uint8, path string, value []byte) {
		var body map[string]any
		if err := json.Unmarshal(jobs[int(which)%len(jobs)], &body); err != nil {
			t.Fatal(err)
		}
		var v any = string(value)
		if json.Valid(value) {
			if err := json.Unmarshal(value, &v); err != nil {
				t.Fatal(err)
			}
		}
		fuzzpath.Set(body, "Job."+path, v)
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		checkJobRegisterBody(t, b)
	})
}

// exampleJobBodies returns the job register bodies of the example jobs.
func exampleJobBodies(f *testing.F) [][]byte {
	files, err := filepath.Glob("../examples/*.nomad.hcl")
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		job, err := jobspec.ParseWithConfig(&jobspec.ParseConfig{Path: file, Body: src})
		if err != nil {
			f.Fatalf("seed %s: %v", file, err)
		}
		body, err := json.Marshal(api.JobRegisterRequest{Job: job})
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, body)
	}
	if len(out) == 0 {
		f.Fatal("no example jobs")
	}
	return out
}

// FuzzSchedulerConfigBody feeds request bodies to the decode path of PUT
// /v1/operator/scheduler/configuration: decodeBody into the handler's
// body type, its batch queue block's defaults, and the validation the
// server applies. Whatever the body, it is refused with an error or
// gives a configuration, never a panic.
func FuzzSchedulerConfigBody(f *testing.F) {
	for _, body := range []string{
		`{}`,
		`null`,
		`{"SchedulerAlgorithm": "random"}`,
		`{"SchedulerAlgorithm": "spread", "MemoryOversubscriptionEnabled": true, "PreemptionConfig": {"SystemSchedulerEnabled": true, "BatchSchedulerEnabled": false}}`,
		`{"BatchQueue": {"Order": "lifo"}}`,
		`{"BatchQueue": {"Order": "fair", "Backfill": "yes"}}`,
		`{"BatchQueue": {"WorkloadTimeout": "soon"}}`,
		`{"BatchQueue": {"ConcurrentPlacements": "two"}}`,
		`{"BatchQueue": {"ConcurrentPlacements": 0}}`,
		`{"BatchQueue": {"WorkloadTimeout": -1000000000}}`,
		`{"BatchQueue": {"Enabled": true, "Order": null, "ConcurrentPlacements": null, "WorkloadTimeout": null}}`,
		`{"BatchQueue": {"Enabled": true, "Order": "priority", "ConcurrentPlacements": 4, "WorkloadTimeout": "5m", "Backfill": true}, "PauseEvalBroker": false, "NodeLimitForFeasibilityChecks": 100}`,
	} {
		f.Add([]byte(body))
	}

	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPut, "/v1/operator/scheduler/configuration", bytes.NewReader(body))
		var b *schedulerConfigBody
		if err := decodeBody(r, &b); err != nil {
			mustBeCoded(t, err)
			return
		}
		if b == nil {
			return
		}
		cfg := structs.SchedulerConfiguration{
			SchedulerAlgorithm:            b.SchedulerAlgorithm,
			PreemptionConfig:              b.PreemptionConfig,
			MemoryOversubscriptionEnabled: b.MemoryOversubscriptionEnabled,
			NodeLimitForFeasibilityChecks: b.NodeLimitForFeasibilityChecks,
		}
		if cfg.SchedulerAlgorithm == "" {
			cfg.SchedulerAlgorithm = structs.SchedulerAlgorithmBinpack
		}
		if b.BatchQueue != nil {
			bq, err := b.BatchQueue.toConfig()
			if err != nil {
				return
			}
			cfg.BatchQueue = bq
		} else {
			cfg.BatchQueue.Canonicalize()
		}
		if err := cfg.Validate(); err != nil && err.Error() == "" {
			t.Fatal("a refused configuration has an empty error")
		}
	})
}

// mustBeCoded fails unless err is answered with an HTTP status, as the
// handler's errors are.
func mustBeCoded(t *testing.T, err error) {
	t.Helper()
	ce, ok := err.(*CodedError)
	if !ok || ce.Code < 400 || ce.Code > 499 {
		t.Fatalf("error is not a 4xx answer: %T %v", err, err)
	}
}
