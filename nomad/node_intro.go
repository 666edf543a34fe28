package nomad

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/nomadq/nomadq/structs"
)

// introClaims is the payload of a client introduction token.
type introClaims struct {
	structs.NodeIntroductionClaims
	jwt.Claims
}

// CreateClientIntroductionToken signs, with the active root key, a JWT a
// new client presents on its first Node.Register: it names the node pool
// (default "default") and, when asked, the node's name, and lives the
// requested TTL (the server default when 0, capped at the maximum).
func (a *ACL) CreateClientIntroductionToken(args *structs.ACLCreateClientIntroductionTokenRequest, reply *structs.ACLCreateClientIntroductionTokenResponse) error {
	if done, err := a.srv.forward("ACL.CreateClientIntroductionToken", args.WriteRequest, args, reply); done {
		return err
	}
	if args.TTL < 0 {
		return structs.NewBadRequestf("TTL %s: must not be negative", args.TTL)
	}
	pool := args.NodePool
	if pool == "" {
		pool = structs.DefaultNodePool
	}
	if err := structs.ValidateNodePoolName(pool); err != nil {
		return structs.NewBadRequestf("NodePool %q: %v", pool, err)
	}
	if pool == structs.AllNodePools {
		return structs.NewBadRequestf("NodePool %q: nodes cannot register in it", pool)
	}
	cfg := a.srv.config.NodeIntroduction
	ttl := args.TTL
	switch {
	case ttl == 0:
		ttl = cfg.DefaultIdentityTTL
	case ttl > cfg.MaxIdentityTTL:
		a.srv.logger.Warn("client introduction token TTL above the server maximum; using the maximum",
			"requested_ttl", ttl, "max_identity_ttl", cfg.MaxIdentityTTL)
		ttl = cfg.MaxIdentityTTL
	}
	// A new cluster's leader writes its first root key just after it is
	// elected; a request that arrives in between waits for it.
	st, err := a.srv.waitActiveRootKey()
	if err != nil {
		return err
	}
	snap, err := st.Snapshot()
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	signer, err := a.srv.keyring.Signer(snap, now)
	if err != nil {
		return err
	}
	claims := introClaims{
		NodeIntroductionClaims: structs.NodeIntroductionClaims{NodePool: pool, NodeName: args.NodeName},
		Claims: jwt.Claims{
			ID:        structs.GenerateUUID(),
			Subject:   structs.NodeIntroductionSubject(a.srv.config.Region, pool, args.NodeName),
			Audience:  jwt.Audience{structs.IdentityDefaultAud},
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			Expiry:    jwt.NewNumericDate(now.Add(ttl)),
		},
	}
	token, err := signer.Sign(claims)
	if err != nil {
		return fmt.Errorf("sign client introduction token: %w", err)
	}
	reply.JWT = token
	return nil
}

// verifyIntroToken checks secret as a client introduction token: signed
// by a root key of the keyring, for the default audience, in its validity
// window, and carrying the introduction claims.
func (s *Server) verifyIntroToken(secret string, now time.Time) (*structs.NodeIntroductionClaims, error) {
	tok, err := jwt.ParseSigned(secret, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return nil, fmt.Errorf("not a signed JWT: %w", err)
	}
	if len(tok.Headers) != 1 || tok.Headers[0].KeyID == "" {
		return nil, errors.New("the token names no signing key")
	}
	key, err := s.State().RootKeyByID(nil, tok.Headers[0].KeyID)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, fmt.Errorf("signing key %s is not in the keyring", tok.Headers[0].KeyID)
	}
	priv, err := s.keyring.PrivateKey(key)
	if err != nil {
		return nil, err
	}
	var claims introClaims
	if err := tok.Claims(&priv.PublicKey, &claims); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(claims.Subject, "node-introduction:") || claims.NodePool == "" {
		return nil, errors.New("not a client introduction token")
	}
	if claims.Expiry == nil {
		return nil, errors.New("the token has no expiry")
	}
	if err := claims.Claims.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{structs.IdentityDefaultAud}, Time: now}, 0); err != nil {
		return nil, err
	}
	if !slices.Contains([]string(claims.Audience), structs.IdentityDefaultAud) {
		return nil, fmt.Errorf("audience %v is not %q", []string(claims.Audience), structs.IdentityDefaultAud)
	}
	return &claims.NodeIntroductionClaims, nil
}

// introductionAllowed decides whether a node that is not in the state
// store may register, by the enforcement level and the token it sent. A
// token that does not verify, or that names another pool or node name,
// is refused at warn and strict alike; no token is refused only at
// strict. Every registration not introduced by a valid token is logged
// and counted (nomad.client.introduction_violation_num) unless the
// level is none.
func (n *Node) introductionAllowed(node *structs.Node, secret string) error {
	level := n.srv.config.NodeIntroduction.Enforcement
	if level == structs.NodeIntroductionEnforcementNone {
		return nil
	}
	pairs := []any{"enforcement_level", level, "node_id", node.ID, "node_pool", node.NodePool, "node_name", node.Name}
	msg := "node registration without introduction token"
	var bad error
	// A client without an introduction token sends its node secret (or
	// nothing); a compact JWS is an introduction attempt.
	if looksLikeJWT(secret) {
		claims, err := n.srv.verifyIntroToken(secret, time.Now())
		switch {
		case err != nil:
			msg, bad = "node registration introduction authentication failure", err
			pairs = append(pairs, "error", err)
		case claims.NodePool != node.NodePool || claims.NodeName != "" && claims.NodeName != node.Name:
			msg = "node registration introduction claims mismatch"
			bad = fmt.Errorf("the introduction token is for node pool %q and node name %q, not pool %q and name %q",
				claims.NodePool, claims.NodeName, node.NodePool, node.Name)
			pairs = append(pairs, "claim_node_pool", claims.NodePool, "claim_node_name", claims.NodeName)
		default:
			return nil
		}
	}
	n.srv.metrics().IncrCounter([]string{"nomad", "client", "introduction_violation_num"}, 1)
	if bad == nil && level == structs.NodeIntroductionEnforcementWarn {
		n.srv.logger.Warn(msg, pairs...)
		return nil
	}
	n.srv.logger.Error(msg, pairs...)
	if bad != nil {
		return fmt.Errorf("%w: node %s: %v", structs.ErrPermissionDenied, node.Name, bad)
	}
	return fmt.Errorf("%w: node %s: client_introduction enforcement is strict and the node sent no introduction token", structs.ErrPermissionDenied, node.Name)
}
