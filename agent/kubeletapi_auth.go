package agent

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/agent/kubeletapi"
)

// apiReviews authenticates bearer tokens with TokenReview and authorizes
// callers with SubjectAccessReview through the agent's own client, as
// kubelet's webhook authn/authz modes do.
type apiReviews struct {
	client kubernetes.Interface
	node   string
}

var (
	_ kubeletapi.TokenReviewer  = apiReviews{}
	_ kubeletapi.AccessReviewer = apiReviews{}
)

// ReviewToken implements kubeletapi.TokenReviewer.
func (a apiReviews) ReviewToken(ctx context.Context, token string) (kubeletapi.Caller, bool, error) {
	tr, err := a.client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return kubeletapi.Caller{}, false, err
	}
	if !tr.Status.Authenticated {
		return kubeletapi.Caller{}, false, nil
	}
	return kubeletapi.Caller{Name: tr.Status.User.Username, Groups: tr.Status.User.Groups}, true, nil
}

// Allowed implements kubeletapi.AccessReviewer.
func (a apiReviews) Allowed(ctx context.Context, c kubeletapi.Caller, verb, subresource string) (bool, error) {
	sar, err := a.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: c.Name, Groups: c.Groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: "nodes", Subresource: subresource, Name: a.node}}},
		metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}
