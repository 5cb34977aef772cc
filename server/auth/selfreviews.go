package auth

import (
	"context"
)

// selfReviewResources are the reviews every authenticated user may create
// about themselves (upstream's system:basic-user role).
var selfReviewResources = map[string]string{
	"selfsubjectreviews":       "authentication.k8s.io",
	"selfsubjectaccessreviews": "authorization.k8s.io",
	"selfsubjectrulesreviews":  "authorization.k8s.io",
}

// SelfReviews allows any authenticated user to create the self reviews
// (`kubectl auth whoami`, `kubectl auth can-i`).
func SelfReviews() Rule {
	return func(_ context.Context, a Attributes) (Decision, string, error) {
		if !a.IsResource || a.Verb != "create" || a.Subresource != "" {
			return NoOpinion, "", nil
		}
		if g, ok := selfReviewResources[a.Resource]; ok && g == a.APIGroup {
			return Allow, "self review", nil
		}
		return NoOpinion, "", nil
	}
}
