package structs

import (
	"testing"
)

// FuzzJobValidate feeds msgpack to the path a job takes when it reaches a
// server over RPC (Job.Register, Job.Plan from another server or a
// client): decode, copy, canonicalize, validate. Whatever the bytes, the
// answer is a job or an error, never a panic; a job that validates
// encodes and decodes again, and the copy validates as it does.
func FuzzJobValidate(f *testing.F) {
	for _, typ := range []string{JobTypeBatch, JobTypeSysBatch, JobTypeService, JobTypeSystem} {
		j := validJob(typ)
		j.Meta = map[string]string{"owner": "fuzz"}
		j.TaskGroups[0].Tasks[0].Config = map[string]any{"command": "/bin/true", "args": []any{"-x", int64(1)}, "nested": map[string]any{"a": []any{}}}
		buf, err := Encode(JobRegisterRequestType, j)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(buf[1:])
	}
	f.Add([]byte{0x80})
	f.Add([]byte{0xc0})

	f.Fuzz(func(t *testing.T, body []byte) {
		var j Job
		if err := Decode(body, &j); err != nil {
			return
		}
		c := j.Copy()
		c.Canonicalize()
		if err := c.Validate(); err != nil {
			return
		}
		_ = c.CheckMaxCount(JobDefaultMaxCount)
		buf, err := Encode(JobRegisterRequestType, c)
		if err != nil {
			t.Fatalf("a valid job does not encode: %v", err)
		}
		var back Job
		if err := Decode(buf[1:], &back); err != nil {
			t.Fatalf("a valid job does not decode again: %v", err)
		}
		again := back.Copy()
		again.Canonicalize()
		if err := again.Validate(); err != nil {
			t.Fatalf("a valid job read back from msgpack is not valid: %v", err)
		}
	})
}
