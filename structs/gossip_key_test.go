package structs

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/hashicorp/memberlist"
	"github.com/shoenig/test/must"
)

// TestDecodeGossipKey: the sizes it takes are exactly memberlist's, and
// no error repeats the key.
func TestDecodeGossipKey(t *testing.T) {
	for n := 0; n <= 64; n++ {
		raw := make([]byte, n)
		_, _ = rand.Read(raw)
		key := base64.StdEncoding.EncodeToString(raw)
		got, err := DecodeGossipKey(key)
		if memberlist.ValidateKey(raw) == nil {
			must.NoError(t, err, must.Sprintf("%d bytes", n))
			must.Eq(t, raw, got)
			continue
		}
		must.Error(t, err, must.Sprintf("%d bytes", n))
		must.StrContains(t, err.Error(), "must be 16, 24 or 32 bytes")
		if key != "" {
			must.False(t, strings.Contains(err.Error(), key))
		}
	}
	_, err := DecodeGossipKey("not base64!")
	must.ErrorContains(t, err, "not valid base64")
	must.False(t, strings.Contains(err.Error(), "not base64!"))
}
