package config

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestConfigValidate_ClientNodePool(t *testing.T) {
	cases := []struct{ pool, wantErr string }{
		{"gpu", ""},
		{"default", ""},
		{"all", `client.node_pool "all" is not allowed`},
		{"a b", `client.node_pool: invalid name "a b"`},
	}
	for _, tc := range cases {
		t.Run(tc.pool, func(t *testing.T) {
			cfg := Dev()
			cfg.Client.NodePool = tc.pool
			err := cfg.Validate()
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}
