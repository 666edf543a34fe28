package jobspec

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// The go-cty-funcs uuid package needs github.com/google/uuid, which is not in
// go.sum, so the two UUID functions are implemented here on the standard
// library (RFC 9562).

// uuidNamespaces are the well-known uuidv5 namespaces, by short name.
var uuidNamespaces = map[string]string{
	"dns":  "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
	"url":  "6ba7b811-9dad-11d1-80b4-00c04fd430c8",
	"oid":  "6ba7b812-9dad-11d1-80b4-00c04fd430c8",
	"x500": "6ba7b814-9dad-11d1-80b4-00c04fd430c8",
}

// uuidV4Func returns a random (version 4) UUID.
var uuidV4Func = function.New(&function.Spec{
	Type: function.StaticReturnType(cty.String),
	Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
		var u [16]byte
		if _, err := rand.Read(u[:]); err != nil {
			return cty.UnknownVal(cty.String), fmt.Errorf("uuidv4: %w", err)
		}
		return cty.StringVal(formatUUID(u, 4)), nil
	},
})

// uuidV5Func returns the name-based (version 5, SHA-1) UUID of a name in a
// namespace given as "dns", "url", "oid", "x500" or a UUID.
var uuidV5Func = function.New(&function.Spec{
	Params: []function.Parameter{
		{Name: "namespace", Type: cty.String},
		{Name: "name", Type: cty.String},
	},
	Type: function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		ns := args[0].AsString()
		if known, ok := uuidNamespaces[ns]; ok {
			ns = known
		}
		nsBytes, err := parseUUID(ns)
		if err != nil {
			return cty.UnknownVal(cty.String), function.NewArgErrorf(0, "uuidv5 namespace: %s", err)
		}
		h := sha1.New()
		h.Write(nsBytes[:])
		h.Write([]byte(args[1].AsString()))
		var u [16]byte
		copy(u[:], h.Sum(nil))
		return cty.StringVal(formatUUID(u, 5)), nil
	},
})

// formatUUID stamps the version and RFC variant bits into u and formats it.
func formatUUID(u [16]byte, version byte) string {
	u[6] = (u[6] & 0x0f) | version<<4
	u[8] = (u[8] & 0x3f) | 0x80
	s := hex.EncodeToString(u[:])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

func parseUUID(s string) ([16]byte, error) {
	var u [16]byte
	raw := strings.ReplaceAll(s, "-", "")
	if len(raw) != 32 || len(s) != 36 {
		return u, fmt.Errorf("%q is not a UUID", s)
	}
	if _, err := hex.Decode(u[:], []byte(raw)); err != nil {
		return u, fmt.Errorf("%q is not a UUID", s)
	}
	return u, nil
}
