package celcond

import (
	"context"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/orch/orch/server/auth"
)

// authorizerAdapter is orch's authorizer as upstream's, for the CEL
// authorizer variable.
type authorizerAdapter struct{ authz auth.Authorizer }

func (a authorizerAdapter) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.authz == nil {
		return authorizer.DecisionNoOpinion, "no authorizer", nil
	}
	ok, reason, err := a.authz.Authorize(ctx, auth.Attributes{User: fromUserInfo(attrs.GetUser()), Verb: attrs.GetVerb(),
		Namespace: attrs.GetNamespace(), APIGroup: attrs.GetAPIGroup(), Resource: attrs.GetResource(),
		Subresource: attrs.GetSubresource(), Name: attrs.GetName(), Path: attrs.GetPath(), IsResource: attrs.IsResourceRequest()})
	if err != nil || !ok {
		return authorizer.DecisionNoOpinion, reason, err
	}
	return authorizer.DecisionAllow, reason, nil
}

// UserInfo is u as upstream's user.Info.
func UserInfo(u *auth.User) user.Info {
	if u == nil {
		return &user.DefaultInfo{}
	}
	return &user.DefaultInfo{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
}

func fromUserInfo(u user.Info) *auth.User {
	if u == nil {
		return &auth.User{}
	}
	return &auth.User{Name: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: u.GetExtra()}
}

// Authorizer is orch's authorizer as upstream's, for upstream plug-ins.
func Authorizer(authz auth.Authorizer) authorizer.UnconditionalAuthorizer {
	return authorizerAdapter{authz}
}
