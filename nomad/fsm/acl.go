package fsm

import "github.com/nomadq/nomadq/structs"

// applyACL applies the ACL system's Raft entries.
func (f *FSM) applyACL(msgType structs.MessageType, buf []byte, index uint64) any {
	st := f.State()
	switch msgType {
	case structs.ACLPolicyUpsertRequestType:
		req, err := decode[structs.ACLPolicyUpsertRequest](buf, msgType)
		if err != nil {
			return err
		}
		return st.UpsertACLPolicies(index, req.Policies)
	case structs.ACLPolicyDeleteRequestType:
		req, err := decode[structs.ACLPolicyDeleteRequest](buf, msgType)
		if err != nil {
			return err
		}
		return st.DeleteACLPolicies(index, req.Names)
	case structs.ACLTokenUpsertRequestType:
		req, err := decode[structs.ACLTokenUpsertRequest](buf, msgType)
		if err != nil {
			return err
		}
		return st.UpsertACLTokens(index, req.Tokens)
	case structs.ACLTokenDeleteRequestType:
		req, err := decode[structs.ACLTokenDeleteRequest](buf, msgType)
		if err != nil {
			return err
		}
		return st.DeleteACLTokens(index, req.AccessorIDs)
	case structs.ACLTokenBootstrapRequestType:
		req, err := decode[structs.ACLTokenBootstrapRequest](buf, msgType)
		if err != nil {
			return err
		}
		if req.Token == nil {
			return missing(msgType, "Token")
		}
		return st.BootstrapACLTokens(index, req.ResetIndex, req.Token)
	case structs.OneTimeTokenUpsertRequestType:
		req, err := decode[structs.OneTimeTokenUpsertRequest](buf, msgType)
		if err != nil {
			return err
		}
		if req.OneTimeToken == nil {
			return missing(msgType, "OneTimeToken")
		}
		return st.UpsertOneTimeToken(index, req.OneTimeToken)
	case structs.OneTimeTokenDeleteRequestType, structs.OneTimeTokenExpireRequestType:
		req, err := decode[structs.OneTimeTokenDeleteRequest](buf, msgType)
		if err != nil {
			return err
		}
		return st.DeleteOneTimeTokens(index, req.OneTimeSecretIDs, req.ExpireBefore)
	case structs.ACLRolesUpsertRequestType:
		req, err := decode[structs.ACLRolesUpsertRequest](buf, msgType)
		if err != nil {
			return err
		}
		return st.UpsertACLRoles(index, req.Roles)
	case structs.ACLRolesDeleteByIDRequestType:
		req, err := decode[structs.ACLRolesDeleteByIDRequest](buf, msgType)
		if err != nil {
			return err
		}
		return st.DeleteACLRolesByID(index, req.ACLRoleIDs)
	}
	return nil
}

// applyACLAuth applies the Raft entries of auth methods and binding rules.
func (f *FSM) applyACLAuth(msgType structs.MessageType, buf []byte, index uint64) any {
	st := f.State()
	switch msgType {
	case structs.ACLAuthMethodsUpsertRequestType:
		req, err := decode[structs.ACLAuthMethodUpsertRequest](buf, msgType)
		if err != nil {
			return err
		}
		return st.UpsertACLAuthMethods(index, req.AuthMethods)
	case structs.ACLAuthMethodsDeleteRequestType:
		req, err := decode[structs.ACLAuthMethodDeleteRequest](buf, msgType)
		if err != nil {
			return err
		}
		return st.DeleteACLAuthMethods(index, req.Names)
	case structs.ACLBindingRulesUpsertRequestType:
		req, err := decode[structs.ACLBindingRulesUpsertRequest](buf, msgType)
		if err != nil {
			return err
		}
		return st.UpsertACLBindingRules(index, req.ACLBindingRules)
	case structs.ACLBindingRulesDeleteRequestType:
		req, err := decode[structs.ACLBindingRulesDeleteRequest](buf, msgType)
		if err != nil {
			return err
		}
		return st.DeleteACLBindingRules(index, req.ACLBindingRuleIDs)
	}
	return nil
}
