package nomad

import (
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

func variableRule(_ *Server, a *acl.ACL, _ *structs.ACLToken, args any) error {
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
		return allowIf(a.AllowVariableOperation(req.RequestNamespace(), req.Path, acl.VariablesCapabilityRead))
	case *structs.VariablesRenewLockRequest:
		return allowIf(a.AllowVariableOperation(req.RequestNamespace(), req.Path, acl.VariablesCapabilityWrite))
	}
	return structs.ErrPermissionDenied
}

// visibleVariables keeps the listed variables the caller may list.
func (s *Server) visibleVariables(token string, metas []*structs.VariableMetadata) ([]*structs.VariableMetadata, error) {
	a, _, err := s.ResolveACL(token)
	if err != nil {
		return nil, err
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
