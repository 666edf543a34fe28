package nomadfmt

import (
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// Inspect counts the records of a Nomad FSM snapshot stream per type, in
// the order Nomad's "operator snapshot inspect" prints them (largest size
// first, by name when equal), and the total.
//
// A record's size is its type byte and its object; as in Nomad's count,
// the stream's header is added to the first record's size, so that the
// sizes add up to the whole stream. Records of types Nomad does not
// write are counted under "Unknown(N)", as Nomad's inspect does: inspect
// reads, it does not judge. A stream cut inside a record or holding
// something that is not msgpack is an error.
func Inspect(r io.Reader) (stats []TypeCount, total TypeCount, err error) {
	cr := &countingReader{r: r}
	// The decoder reads exactly one object from a plain io.Reader (no
	// read-ahead), so the type bytes can be read from cr between objects.
	dec := codec.NewDecoder(cr, Handle)
	var header map[string]any
	if err := dec.Decode(&header); err != nil {
		return nil, TypeCount{}, fmt.Errorf("read snapshot header: %w", err)
	}
	byType := map[SnapshotType]*TypeCount{}
	typeByte := make([]byte, 1)
	for {
		n, err := io.ReadFull(cr, typeByte)
		if n == 0 && errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, TypeCount{}, fmt.Errorf("read snapshot record %d: %w", total.Count, err)
		}
		t := SnapshotType(typeByte[0])
		var obj any
		if err := dec.Decode(&obj); err != nil {
			return nil, TypeCount{}, fmt.Errorf("read snapshot record %d (%s): %w", total.Count, t, err)
		}
		tc := byType[t]
		if tc == nil {
			tc = &TypeCount{Type: t, Name: t.String()}
			byType[t] = tc
		}
		tc.Count++
		tc.Size += cr.n - total.Size
		total.Count++
		total.Size = cr.n
	}
	stats = make([]TypeCount, 0, len(byType))
	for _, tc := range byType {
		stats = append(stats, *tc)
	}
	sort.Slice(stats, func(i, j int) bool {
		if stats[i].Size != stats[j].Size {
			return stats[i].Size > stats[j].Size
		}
		return stats[i].Name < stats[j].Name
	})
	total.Name = "Total"
	return stats, total, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
