package auth

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mitchellh/pointerstructure"

	"github.com/nomadq/nomadq/structs"
)

// SelectorData maps a token's claims through the method's ClaimMappings
// (claim -> value.<name>) and ListClaimMappings (claim -> list.<name>).
// A claim named with a leading "/" is a JSON pointer into nested claims;
// a claim the token lacks is left out.
func SelectorData(c *structs.ACLAuthMethodConfig, claims map[string]any) (*structs.ACLAuthClaims, error) {
	out := &structs.ACLAuthClaims{Value: map[string]string{}, List: map[string][]string{}}
	for source, target := range c.ClaimMappings {
		raw := claimAt(claims, source)
		if raw == nil {
			continue
		}
		s, ok := claimString(raw)
		if !ok {
			return nil, fmt.Errorf("claim %q of type %T cannot be mapped to a string value", source, raw)
		}
		out.Value[target] = s
	}
	for source, target := range c.ListClaimMappings {
		raw := claimAt(claims, source)
		if raw == nil {
			continue
		}
		var items []any
		switch v := raw.(type) {
		case []any:
			items = v
		default:
			// A single value is a list of one, as Nomad reads it.
			items = []any{v}
		}
		list := make([]string, 0, len(items))
		for _, item := range items {
			s, ok := claimString(item)
			if !ok {
				return nil, fmt.Errorf("value %v in list claim %q cannot be mapped to a string", item, source)
			}
			if s != "" {
				list = append(list, s)
			}
		}
		out.List[target] = list
	}
	return out, nil
}

func claimAt(claims map[string]any, name string) any {
	if !strings.HasPrefix(name, "/") {
		return claims[name]
	}
	v, err := pointerstructure.Get(claims, name)
	if err != nil {
		return nil // a pointer to nothing: the claim is absent
	}
	return v
}

// claimString renders a scalar claim as a string; objects and lists are
// not scalars.
func claimString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case json.Number:
		return x.String(), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	}
	return "", false
}
