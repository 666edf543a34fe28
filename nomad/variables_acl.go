package nomad

import (
	"errors"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/structs"
)

// The ACL rules of the variables endpoints, as Nomad checks them: a path's
// read, write (set, cas, locks) or destroy (deletes) capability in the
// variable's namespace. Lists are filtered per variable by the endpoint.
func init() {
	rpcRules["Variables.Apply"] = variableRule
	rpcRules["Variables.Read"] = variableRule
	rpcRules["Variables.RenewLock"] = variableRule
	rpcRules["Variables.List"] = ruleSelfChecked
}

// variableRule checks a variable call against the caller's ACL; a read
// the ACL does not allow passes when the caller is a task whose workload
// identity implicitly covers the path (see workloadIdentity).
func variableRule(s *Server, a *acl.ACL, _ *structs.ACLToken, args any) error {
	switch req := args.(type) {
	case *structs.VariablesApplyRequest:
		ns, path := req.RequestNamespace(), ""
		if req.Var != nil {
			path = req.Var.Path
			if req.Var.Namespace != "" {
				ns = req.Var.Namespace
			}
		}
		op := acl.VariablesCapabilityWrite
		if req.Op == structs.VarOpDelete || req.Op == structs.VarOpDeleteCAS {
			op = acl.VariablesCapabilityDestroy
		}
		return allowIf(a.AllowVariableOperation(ns, path, op))
	case *structs.VariablesReadRequest:
		if a.AllowVariableOperation(req.RequestNamespace(), req.Path, acl.VariablesCapabilityRead) {
			return nil
		}
		if wi, err := s.resolveWorkloadIdentity(req.AuthToken); err == nil && wi.mayReadVariable(req.RequestNamespace(), req.Path) {
			return nil
		}
		return structs.ErrPermissionDenied
	case *structs.VariablesRenewLockRequest:
		return allowIf(a.AllowVariableOperation(req.RequestNamespace(), req.Path, acl.VariablesCapabilityWrite))
	}
	return structs.ErrPermissionDenied
}

// visibleVariables keeps the listed variables the caller may list: by
// its ACL, or, for a task's workload identity, those of its own job,
// group and task.
func (s *Server) visibleVariables(token string, metas []*structs.VariableMetadata) ([]*structs.VariableMetadata, error) {
	a, _, err := s.ResolveACL(token)
	if err != nil {
		wi, werr := s.resolveWorkloadIdentity(token)
		if werr != nil {
			if errors.Is(werr, errNotWorkloadIdentity) {
				return nil, err
			}
			return nil, structs.ErrPermissionDenied
		}
		out := metas[:0]
		for _, m := range metas {
			if wi.mayReadVariable(m.Namespace, m.Path) {
				out = append(out, m)
			}
		}
		return out, nil
	}
	if a.IsManagement() {
		return metas, nil
	}
	out := metas[:0]
	for _, m := range metas {
		if a.AllowVariableOperation(m.Namespace, m.Path, acl.VariablesCapabilityList) {
			out = append(out, m)
		}
	}
	return out, nil
}
