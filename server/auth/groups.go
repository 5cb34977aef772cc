package auth

import "slices"

// Well-known user and group names.
const (
	GroupAuthenticated = "system:authenticated"
	GroupMasters       = "system:masters"
	GroupNodes         = "system:nodes"
	NodeUserPrefix     = "system:node:"
)

// withAuthenticated returns groups plus system:authenticated, without
// duplicates or empty names.
func withAuthenticated(groups []string) []string {
	out := make([]string, 0, len(groups)+1)
	for _, g := range groups {
		if g != "" && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	if !slices.Contains(out, GroupAuthenticated) {
		out = append(out, GroupAuthenticated)
	}
	return out
}
