// Package auth turns a credential from another identity provider into
// what an ACL token grants: it verifies a JWT against an auth method's
// keys and bounds, maps its claims into the variables binding rule
// selectors read, and evaluates the rules.
package auth

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"time"

	capjwt "github.com/hashicorp/cap/jwt"

	"github.com/nomadq/nomadq/structs"
)

// CheckJWTConfig refuses, when the method is stored, a JWT method whose
// keys, CA certificates or signing algorithms could never verify a token,
// so the operator hears of it then and not at every login.
func CheckJWTConfig(c *structs.ACLAuthMethodConfig) error {
	var errs structs.MultiError
	for i, k := range c.JWTValidationPubKeys {
		if _, err := capjwt.ParsePublicKeyPEM([]byte(k)); err != nil {
			errs.Add(fmt.Errorf("JWTValidationPubKeys[%d]: not a PEM-encoded public key: %v", i, err))
		}
	}
	if c.JWKSCACert != "" && !validCAPEM(c.JWKSCACert) {
		errs.Add(errors.New("JWKSCACert: not a PEM-encoded certificate"))
	}
	for i, ca := range c.DiscoveryCaPem {
		if !validCAPEM(ca) {
			errs.Add(fmt.Errorf("DiscoveryCaPem[%d]: not a PEM-encoded certificate", i))
		}
	}
	for _, alg := range c.SigningAlgs {
		if err := capjwt.SupportedSigningAlgorithm(capjwt.Alg(alg)); err != nil {
			errs.Add(fmt.Errorf("SigningAlgs: %q is not a supported algorithm (RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512, EdDSA)", alg))
		}
	}
	return errs.ErrorOrNil()
}

func validCAPEM(s string) bool {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return false
	}
	_, err := x509.ParseCertificate(block.Bytes)
	return err == nil
}

// ValidateJWT verifies token's signature with the method's keys (static
// public keys, a JWKS URL or an OIDC discovery URL) and checks its
// algorithm, audience, issuer and time claims with the method's leeways.
// It returns every claim of a valid token. now is the clock the time
// claims are checked against.
func ValidateJWT(ctx context.Context, token string, c *structs.ACLAuthMethodConfig, now func() time.Time) (map[string]any, error) {
	var keySet capjwt.KeySet
	var err error
	switch {
	case len(c.JWTValidationPubKeys) > 0:
		keys := make([]crypto.PublicKey, 0, len(c.JWTValidationPubKeys))
		for _, k := range c.JWTValidationPubKeys {
			key, err := capjwt.ParsePublicKeyPEM([]byte(k))
			if err != nil {
				return nil, fmt.Errorf("unable to parse public key for JWT auth: %v", err)
			}
			keys = append(keys, key)
		}
		keySet, err = capjwt.NewStaticKeySet(keys)
	case c.JWKSURL != "":
		keySet, err = capjwt.NewJSONWebKeySet(ctx, c.JWKSURL, c.JWKSCACert)
		if err != nil {
			err = fmt.Errorf("unable to get validation keys from JWKS: %v", err)
		}
	case c.OIDCDiscoveryURL != "":
		ca := ""
		if len(c.DiscoveryCaPem) > 0 {
			ca = c.DiscoveryCaPem[0]
		}
		keySet, err = capjwt.NewOIDCDiscoveryKeySet(ctx, c.OIDCDiscoveryURL, ca)
		if err != nil {
			err = fmt.Errorf("unable to get validation keys from OIDC provider: %v", err)
		}
	default:
		err = errors.New("auth method has no key to verify tokens with")
	}
	if err != nil {
		return nil, err
	}
	validator, err := capjwt.NewValidator(keySet)
	if err != nil {
		return nil, err
	}
	algs := make([]capjwt.Alg, 0, len(c.SigningAlgs))
	for _, a := range c.SigningAlgs {
		algs = append(algs, capjwt.Alg(a))
	}
	claims, err := validator.Validate(ctx, token, capjwt.Expected{
		Audiences:         c.BoundAudiences,
		SigningAlgorithms: algs,
		NotBeforeLeeway:   c.NotBeforeLeeway,
		ExpirationLeeway:  c.ExpirationLeeway,
		ClockSkewLeeway:   c.ClockSkewLeeway,
		Now:               now,
	})
	if err != nil {
		return nil, fmt.Errorf("unable to verify signature of JWT token: %v", err)
	}
	// The issuer is checked here: a method may trust several.
	if len(c.BoundIssuer) > 0 {
		raw, ok := claims["iss"]
		if !ok {
			return nil, errors.New("auth method specifies BoundIssuer but the provided token does not contain issuer information")
		}
		iss, ok := raw.(string)
		if !ok {
			return nil, errors.New("unable to read iss property of provided token")
		}
		if !slices.Contains(c.BoundIssuer, iss) {
			return nil, fmt.Errorf("invalid JWT issuer: %q", iss)
		}
	}
	return claims, nil
}
