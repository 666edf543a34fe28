package structs

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Client introduction enforcement levels (server client_introduction
// block), Nomad's: none lets a node register without an introduction
// token silently, warn logs and counts it, strict refuses it.
const (
	NodeIntroductionEnforcementNone   = "none"
	NodeIntroductionEnforcementWarn   = "warn"
	NodeIntroductionEnforcementStrict = "strict"
)

// NodeIntroductionConfig is the server's client_introduction block.
type NodeIntroductionConfig struct {
	Enforcement        string
	DefaultIdentityTTL time.Duration
	MaxIdentityTTL     time.Duration
}

// DefaultNodeIntroductionConfig is Nomad's default: warn, tokens living
// 5 minutes unless asked otherwise, 30 minutes at most.
func DefaultNodeIntroductionConfig() *NodeIntroductionConfig {
	return &NodeIntroductionConfig{
		Enforcement:        NodeIntroductionEnforcementWarn,
		DefaultIdentityTTL: 5 * time.Minute,
		MaxIdentityTTL:     30 * time.Minute,
	}
}

// Validate names every bad setting of the block.
func (c *NodeIntroductionConfig) Validate() error {
	var errs []error
	switch c.Enforcement {
	case NodeIntroductionEnforcementNone, NodeIntroductionEnforcementWarn, NodeIntroductionEnforcementStrict:
	default:
		errs = append(errs, fmt.Errorf("client_introduction.enforcement %q: must be one of none, warn, strict", c.Enforcement))
	}
	if c.DefaultIdentityTTL <= 0 {
		errs = append(errs, fmt.Errorf("client_introduction.default_identity_ttl %s: must be greater than 0", c.DefaultIdentityTTL))
	}
	if c.MaxIdentityTTL <= 0 {
		errs = append(errs, fmt.Errorf("client_introduction.max_identity_ttl %s: must be greater than 0", c.MaxIdentityTTL))
	}
	if c.MaxIdentityTTL < c.DefaultIdentityTTL {
		errs = append(errs, fmt.Errorf("client_introduction.max_identity_ttl %s: must not be less than default_identity_ttl %s", c.MaxIdentityTTL, c.DefaultIdentityTTL))
	}
	return errors.Join(errs...)
}

// NodeIntroductionClaims are the nomad_* claims of a client introduction
// token: the pool the node must register in and, when set, its name.
type NodeIntroductionClaims struct {
	NodePool string `json:"nomad_node_pool"`
	NodeName string `json:"nomad_node_name"`
}

// NodeIntroductionSubject is the sub claim of an introduction token:
// node-introduction:<region>:<pool>:<name>:default, Nomad's shape.
func NodeIntroductionSubject(region, pool, name string) string {
	return "node-introduction:" + region + ":" + pool + ":" + name + ":default"
}

// ACLCreateClientIntroductionTokenRequest asks for a signed client
// introduction token (PUT /v1/acl/identity/client-introduction-token).
type ACLCreateClientIntroductionTokenRequest struct {
	// TTL is how long the token lives; 0 means the server's
	// default_identity_ttl, and more than max_identity_ttl is capped.
	TTL      time.Duration
	NodeName string
	NodePool string
	WriteRequest
}

// UnmarshalJSON takes TTL as nanoseconds (the api module's encoding) or
// as a duration string ("10m"), as Nomad does.
func (r *ACLCreateClientIntroductionTokenRequest) UnmarshalJSON(data []byte) error {
	type plain ACLCreateClientIntroductionTokenRequest
	aux := struct {
		TTL any
		*plain
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	switch v := aux.TTL.(type) {
	case nil:
	case float64:
		r.TTL = time.Duration(v)
	case string:
		if v == "" {
			break
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("TTL %q: not a duration (like \"10m\") or a number of nanoseconds", v)
		}
		r.TTL = d
	default:
		return fmt.Errorf("TTL %v: must be a duration string or a number of nanoseconds", v)
	}
	return nil
}

// ACLCreateClientIntroductionTokenResponse carries the signed token.
type ACLCreateClientIntroductionTokenResponse struct {
	JWT string
}
