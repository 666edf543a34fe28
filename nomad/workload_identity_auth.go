package nomad

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/structs"
)

// errNotWorkloadIdentity: the secret is not a workload identity JWT.
var errNotWorkloadIdentity = errors.New("not a workload identity")

// workloadIdentity is a verified task identity: the claims of a JWT the
// keyring signed, checked against the alloc it names.
type workloadIdentity struct {
	Namespace string
	JobID     string
	Group     string
	Task      string
}

// looksLikeJWT tells a compact JWS (three base64url parts) from an ACL
// token's UUID or a node secret without parsing it.
func looksLikeJWT(secret string) bool {
	return strings.Count(secret, ".") == 2
}

// resolveWorkloadIdentity verifies secret as a workload identity: signed
// by a root key of the keyring, for the default audience, naming an alloc
// that exists, has not ended on its client and runs the claimed task of
// the claimed job in the claimed namespace. It answers
// errNotWorkloadIdentity for a secret that is no JWT.
func (s *Server) resolveWorkloadIdentity(secret string) (*workloadIdentity, error) {
	if !looksLikeJWT(secret) {
		return nil, errNotWorkloadIdentity
	}
	tok, err := jwt.ParseSigned(secret, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return nil, fmt.Errorf("workload identity: %w", err)
	}
	if len(tok.Headers) != 1 || tok.Headers[0].KeyID == "" {
		return nil, errors.New("workload identity: the token names no signing key")
	}
	st := s.State()
	key, err := st.RootKeyByID(nil, tok.Headers[0].KeyID)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, fmt.Errorf("workload identity: signing key %s is not in the keyring", tok.Headers[0].KeyID)
	}
	priv, err := s.keyring.PrivateKey(key)
	if err != nil {
		return nil, err
	}
	var claims keyring.WorkloadClaims
	if err := tok.Claims(&priv.PublicKey, &claims); err != nil {
		return nil, fmt.Errorf("workload identity: %w", err)
	}
	if !slices.Contains([]string(claims.Audience), structs.IdentityDefaultAud) {
		return nil, fmt.Errorf("workload identity: audience %v is not %q", []string(claims.Audience), structs.IdentityDefaultAud)
	}
	c := claims.WorkloadIdentityClaims
	alloc, err := st.AllocByID(nil, c.AllocationID)
	if err != nil {
		return nil, err
	}
	if alloc == nil || alloc.Job == nil {
		return nil, fmt.Errorf("workload identity: allocation %s does not exist", c.AllocationID)
	}
	if alloc.ClientTerminalStatus() {
		return nil, fmt.Errorf("workload identity: allocation %s has ended", c.AllocationID)
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if alloc.Namespace != c.Namespace || alloc.Job.IDForWorkloadIdentity() != c.JobID || tg == nil || tg.LookupTask(c.TaskName) == nil {
		return nil, fmt.Errorf("workload identity: allocation %s does not run task %q of job %q in namespace %q", alloc.ID, c.TaskName, c.JobID, c.Namespace)
	}
	return &workloadIdentity{Namespace: c.Namespace, JobID: c.JobID, Group: alloc.TaskGroup, Task: c.TaskName}, nil
}

// mayReadVariable reports whether the identity's implicit policy covers
// path in ns: a task reads the variables of its own job, group and task,
// nomad/jobs, nomad/jobs/<job>, nomad/jobs/<job>/<group> and
// nomad/jobs/<job>/<group>/<task>, in its own namespace, and no others.
func (w *workloadIdentity) mayReadVariable(ns, path string) bool {
	if ns != w.Namespace {
		return false
	}
	own := []string{"nomad", "jobs", w.JobID, w.Group, w.Task}
	for n := 2; n <= len(own); n++ {
		if path == strings.Join(own[:n], "/") {
			return true
		}
	}
	return false
}
