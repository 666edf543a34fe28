package nomadfmt

import (
	"bytes"
	"testing"
)

// FuzzRead feeds Read and Inspect state streams mutated from the ones real
// Nomad 2.0.6 wrote: whatever the bytes, they answer a state or an error,
// never a panic, and a stream Read accepts is one Inspect can count.
// (The seeds are 8-16 KB: the fuzzer spends its first seconds minimizing
// what it finds in them.)
func FuzzRead(f *testing.F) {
	for _, name := range []string{"small", "full"} {
		f.Add(fixtureStream(f, name))
	}
	f.Add([]byte{0x80})
	f.Add([]byte{0x80, byte(JobSnapshot), 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Read(bytes.NewReader(data))
		if err != nil {
			if res != nil {
				t.Fatalf("Read answered a state with its error %v", err)
			}
			return
		}
		if res.State == nil {
			t.Fatal("Read answered no state and no error")
		}
		if _, _, err := Inspect(bytes.NewReader(data)); err != nil {
			t.Fatalf("Read accepted a stream Inspect refuses: %v", err)
		}
	})
}
