package auth

import (
	"context"
	"slices"
	"strings"
)

// publicPaths are what upstream's default policy lets every authenticated
// user read (ClusterRoles system:discovery and system:public-info-viewer,
// bound to system:authenticated).
var publicPaths = []string{"/api", "/apis", "/version", "/healthz", "/livez", "/readyz", "/openapi"}

// oidcPaths are the issuer discovery documents, readable by ServiceAccounts
// (upstream's system:service-account-issuer-discovery binding).
var oidcPaths = []string{"/.well-known/openid-configuration", "/openid/v1/jwks"}

// PublicInfo allows authenticated users to read discovery, version, health
// and OpenAPI, and ServiceAccounts to read the OIDC discovery documents,
// as upstream's bootstrap RBAC policy does.
func PublicInfo() Rule {
	return func(_ context.Context, a Attributes) (Decision, string, error) {
		if a.IsResource || (a.Verb != "get" && a.Verb != "head") {
			return NoOpinion, "", nil
		}
		p := strings.TrimSuffix(a.Path, "/")
		for _, pub := range publicPaths {
			if p == pub || strings.HasPrefix(p, pub+"/") {
				return Allow, "public information", nil
			}
		}
		if slices.Contains(oidcPaths, p) && slices.Contains(a.User.Groups, "system:serviceaccounts") {
			return Allow, "service account issuer discovery", nil
		}
		return NoOpinion, "", nil
	}
}
