package reviews

import (
	"context"
	"fmt"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/apiserver"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/registry"
)

// TokenAuthenticator checks one bearer token; audiences empty = the API
// server's. It returns the user and the audiences the token is good for.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string, audiences []string) (*auth.User, []string, bool, error)
}

// Authentication returns TokenReview and SelfSubjectReview.
func Authentication(tokens TokenAuthenticator) []apiserver.Virtual {
	gv := authenticationv1.SchemeGroupVersion
	return []apiserver.Virtual{
		{Resource: virtual(registry.Def{GroupVersion: gv, Resource: "tokenreviews", Kind: "TokenReview",
			New: registry.NewObjects[authenticationv1.TokenReview](), NewList: registry.NewObjects[authenticationv1.TokenReview]()}),
			Create: tokenReview(tokens)},
		{Resource: virtual(registry.Def{GroupVersion: gv, Resource: "selfsubjectreviews", Kind: "SelfSubjectReview",
			New: registry.NewObjects[authenticationv1.SelfSubjectReview](), NewList: registry.NewObjects[authenticationv1.SelfSubjectReview]()}),
			Create: selfSubjectReview},
	}
}

// virtual builds a create-only resource.
func virtual(d registry.Def) *registry.Resource {
	r := d.Build()
	r.Verbs = []string{"create"}
	return r
}

func tokenReview(tokens TokenAuthenticator) apiserver.VirtualCreate {
	return func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		tr := obj.(*authenticationv1.TokenReview)
		if tr.Spec.Token == "" {
			return nil, apierrors.NewInvalid(tr.GroupVersionKind().GroupKind(), tr.Name,
				field.ErrorList{field.Required(field.NewPath("spec", "token"), "")})
		}
		u, auds, ok, err := tokens.AuthenticateToken(ctx, tr.Spec.Token, tr.Spec.Audiences)
		out := tr.DeepCopy()
		switch {
		case err != nil:
			out.Status = authenticationv1.TokenReviewStatus{Error: err.Error()}
		case !ok:
			out.Status = authenticationv1.TokenReviewStatus{Error: "token not recognised"}
		default:
			out.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: userInfo(u), Audiences: auds}
		}
		return out, nil
	}
}

func selfSubjectReview(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	u, ok := auth.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("no user in the request context"))
	}
	out := obj.(*authenticationv1.SelfSubjectReview).DeepCopy()
	out.Status.UserInfo = userInfo(u)
	return out, nil
}

func userInfo(u *auth.User) authenticationv1.UserInfo {
	ui := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: append([]string(nil), u.Groups...)}
	if len(u.Extra) > 0 {
		ui.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range u.Extra {
			ui.Extra[k] = append(authenticationv1.ExtraValue(nil), v...)
		}
	}
	return ui
}

// ChainTokens checks a token with a request authenticator (the API
// server's whole chain) when no audiences are asked for, and with the
// ServiceAccount authenticator (the only one that knows audiences) otherwise.
type ChainTokens struct {
	Chain          auth.Authenticator
	ServiceAccount interface {
		AuthenticateToken(ctx context.Context, token string, audiences []string) (*auth.User, bool, error)
	}
	APIAudiences []string
}

// AuthenticateToken implements TokenAuthenticator.
func (c ChainTokens) AuthenticateToken(ctx context.Context, token string, audiences []string) (*auth.User, []string, bool, error) {
	if len(audiences) > 0 {
		u, ok, err := c.ServiceAccount.AuthenticateToken(ctx, token, audiences)
		return u, audiences, ok, err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/", nil)
	if err != nil {
		return nil, nil, false, err
	}
	r.Header.Set("Authorization", "Bearer "+token)
	u, ok, err := c.Chain.AuthenticateRequest(r)
	return u, c.APIAudiences, ok, err
}
