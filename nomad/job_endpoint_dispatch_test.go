package nomad

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestValidateDispatch(t *testing.T) {
	parent := func(payload string) *structs.Job {
		j := mockJob("work")
		j.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: payload, MetaRequired: []string{"a"}, MetaOptional: []string{"b"}}
		return j
	}
	plain := mockJob("plain")
	stopped := parent(structs.DispatchPayloadOptional)
	stopped.Stop = true
	meta := map[string]string{"a": "1"}
	cases := []struct {
		name   string
		parent *structs.Job
		args   structs.JobDispatchRequest
		err    string
	}{
		{"ok", parent(structs.DispatchPayloadOptional), structs.JobDispatchRequest{Meta: meta}, ""},
		{"ok with optional meta", parent(structs.DispatchPayloadOptional), structs.JobDispatchRequest{Meta: map[string]string{"a": "1", "b": "2"}}, ""},
		{"not parameterized", plain, structs.JobDispatchRequest{}, `Specified job "plain" is not a parameterized job`},
		{"stopped", stopped, structs.JobDispatchRequest{Meta: meta}, `Specified job "work" is stopped`},
		{"payload forbidden", parent(structs.DispatchPayloadForbidden), structs.JobDispatchRequest{Meta: meta, Payload: []byte("x")}, "Payload is not allowed"},
		{"payload required", parent(structs.DispatchPayloadRequired), structs.JobDispatchRequest{Meta: meta}, "Payload is required"},
		{"payload at limit", parent(structs.DispatchPayloadRequired), structs.JobDispatchRequest{Meta: meta, Payload: bytes.Repeat([]byte("x"), 16384)}, ""},
		{"payload over limit", parent(structs.DispatchPayloadRequired), structs.JobDispatchRequest{Meta: meta, Payload: bytes.Repeat([]byte("x"), 16385)}, "Payload exceeds maximum size: 16385 bytes > 16384 bytes"},
		{"missing meta", parent(structs.DispatchPayloadOptional), structs.JobDispatchRequest{}, "Dispatch did not provide required meta keys: [a]"},
		{"unpermitted meta", parent(structs.DispatchPayloadOptional), structs.JobDispatchRequest{Meta: map[string]string{"a": "1", "z": "2", "y": "3"}}, "Dispatch provided unpermitted meta keys: [y z] (allowed: [a b])"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := validateDispatch(tc.parent, &tc.args)
			if tc.err == "" {
				must.NoError(t, err)
				return
			}
			code, msg, ok := structs.CodeFromRPCCodedErr(err)
			must.True(t, ok)
			must.Eq(t, http.StatusBadRequest, code)
			must.StrContains(t, msg, tc.err)
		})
	}
}

func TestDispatchedChild(t *testing.T) {
	p := mockJob("work")
	p.Meta = map[string]string{"team": "a", "n": "0"}
	p.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: structs.DispatchPayloadOptional}
	now := time.Unix(1700000000, 0)
	c := dispatchedChild(p, &structs.JobDispatchRequest{Payload: []byte("hi"), Meta: map[string]string{"n": "7"}, IdempotencyToken: "tok"}, now)
	must.True(t, strings.HasPrefix(c.ID, "work/dispatch-1700000000-"))
	must.Eq(t, len("work/dispatch-1700000000-")+8, len(c.ID))
	must.Eq(t, "work", c.ParentID)
	must.True(t, c.Dispatched)
	must.False(t, c.IsParameterized())
	must.Eq(t, map[string]string{"team": "a", "n": "7"}, c.Meta)
	must.Eq(t, "hi", string(c.Payload))
	must.Eq(t, "tok", c.DispatchIdempotencyToken)
	must.Eq(t, map[string]string{"team": "a", "n": "0"}, p.Meta) // the parent is untouched
}
