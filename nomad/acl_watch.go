package nomad

import (
	"context"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// WatchACL follows the ACL of a secret for a long-lived request (the
// event stream) while ctx lasts. It calls changed with the ACL as it is
// now, and again whenever the token, a policy or a role changes; it
// returns structs.ErrTokenNotFound as soon as this server applies the
// token's deletion, structs.ErrTokenExpired when the token's expiry
// passes, changed's own error when it returns one, and nil when ctx
// ends. It watches this server's state, so every server ends its own
// streams when the deletion reaches it through Raft.
func (s *Server) WatchACL(ctx context.Context, secret string, changed func(*acl.ACL) error) error {
	for {
		ws := memdb.NewWatchSet()
		st := s.State()
		var expires time.Time
		if s.config.ACLEnabled && secret != "" && secret != s.leaderACL {
			token, err := st.ACLTokenBySecretID(ws, secret)
			if err != nil {
				return err
			}
			if token == nil {
				return structs.ErrTokenNotFound
			}
			if token.IsExpired(time.Now()) {
				return structs.ErrTokenExpired
			}
			if token.ExpirationTime != nil {
				expires = *token.ExpirationTime
			}
		}
		for _, table := range []string{state.TableACLPolicies, state.TableACLRoles} {
			if _, err := st.TableIndexWatch(ws, table); err != nil {
				return err
			}
		}
		a, _, err := s.ResolveACL(secret)
		if err != nil {
			return err
		}
		if err := changed(a); err != nil {
			return err
		}
		wait, cancel := ctx, context.CancelFunc(func() {})
		if !expires.IsZero() {
			wait, cancel = context.WithDeadline(ctx, expires)
		}
		_ = ws.WatchCtx(wait)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
	}
}
