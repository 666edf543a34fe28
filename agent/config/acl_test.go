package config

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// A cached resolution holds the token, its policies and its roles, so each
// of token_ttl, policy_ttl and role_ttl bounds how long it is kept.
func TestACLConfig_CacheTTL(t *testing.T) {
	cases := []struct {
		name                string
		token, policy, role time.Duration
		want                time.Duration
	}{
		{"defaults", 30 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second},
		{"policy_ttl shortest", time.Minute, 5 * time.Second, time.Minute, 5 * time.Second},
		{"role_ttl shortest", time.Minute, time.Minute, 2 * time.Second, 2 * time.Second},
		{"token_ttl shortest", time.Second, time.Minute, time.Minute, time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &ACL{TokenTTL: tc.token, PolicyTTL: tc.policy, RoleTTL: tc.role}
			must.Eq(t, tc.want, c.CacheTTL())
		})
	}
}
