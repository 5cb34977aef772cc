package auth

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"
)

// Decision is what one authorization rule says about a request.
type Decision int

// Rule decisions. The first rule that allows or denies decides; when all
// have no opinion the request is denied.
const (
	NoOpinion Decision = iota
	Allow
	Deny
)

// Rule is one authorization rule. reason explains an Allow or Deny.
type Rule func(ctx context.Context, a Attributes) (d Decision, reason string, err error)

// RuleAuthorizer evaluates an ordered list of rules.
type RuleAuthorizer struct {
	log   *zap.Logger
	rules []Rule
}

var _ Authorizer = (*RuleAuthorizer)(nil)

// NewAuthorizer allows members of system:masters everything, then asks
// extra rules in order (the seam for node rules: system:node:<name> in
// system:nodes), and denies what no rule allowed.
func NewAuthorizer(logger *zap.Logger, extra ...Rule) *RuleAuthorizer {
	if logger == nil {
		logger = zap.NewNop()
	}
	rules := append([]Rule{AllowGroup(GroupMasters)}, extra...)
	return &RuleAuthorizer{log: logger.Named("authorizer"), rules: rules}
}

// Authorize implements Authorizer.
func (z *RuleAuthorizer) Authorize(ctx context.Context, a Attributes) (bool, string, error) {
	if a.User == nil {
		return false, "no authenticated user", nil
	}
	var reasons []string
	for _, rule := range z.rules {
		d, reason, err := rule(ctx, a)
		if err != nil {
			return false, "", fmt.Errorf("authorize %s: %w", describe(a), err)
		}
		switch d {
		case Allow:
			return true, reason, nil
		case Deny:
			z.log.Debug("denied", zap.String("user", a.User.Name), zap.String("request", describe(a)), zap.String("reason", reason))
			return false, reason, nil
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
	}
	// As upstream's union authorizer: the reasons of the rules that had no
	// opinion (usually none, so the 403 message ends with the request).
	z.log.Debug("denied", zap.String("user", a.User.Name), zap.String("request", describe(a)), zap.String("reason", "no rule"))
	return false, strings.Join(reasons, "\n"), nil
}

// AllowGroup allows everything to members of group.
func AllowGroup(group string) Rule {
	return func(_ context.Context, a Attributes) (Decision, string, error) {
		if slices.Contains(a.User.Groups, group) {
			return Allow, "member of " + group, nil
		}
		return NoOpinion, "", nil
	}
}

// describe renders a request like kube's forbidden messages do.
func describe(a Attributes) string {
	if !a.IsResource {
		return fmt.Sprintf("%s path %q", a.Verb, a.Path)
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	s := fmt.Sprintf("%s resource %q in API group %q", a.Verb, res, a.APIGroup)
	if a.Name != "" {
		s += fmt.Sprintf(" named %q", a.Name)
	}
	if a.Namespace != "" {
		s += fmt.Sprintf(" in namespace %q", a.Namespace)
	} else {
		s += " at the cluster scope"
	}
	return s
}
