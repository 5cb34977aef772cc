package encryption

import "strings"

// storagePrefix is where orch keeps every API object:
// /registry/<group/>resource/<ns>/<name>, core resources without a group
// segment (server/registry Resource.Key), as kube-apiserver lays out etcd.
const storagePrefix = "/registry/"

// ungroupedGroups are the built-in API groups whose names have no dot; any
// other first key segment without a dot is a core resource.
var ungroupedGroups = map[string]bool{"apps": true, "batch": true, "policy": true, "autoscaling": true}

// matcher selects the storage keys of one configured resource name.
type matcher struct {
	prefix   string // every matching key starts with it
	coreOnly bool   // "*.": the first segment after /registry/ must be a core resource
}

// newMatcher maps a validated resource name to its keys: "secrets" →
// /registry/secrets/, "widgets.example.com" → /registry/example.com/widgets/,
// "*.apps" → /registry/apps/, "*." → every core resource, "*.*" → everything.
func newMatcher(name string) matcher {
	res, group := splitResource(name)
	switch {
	case res == "*" && group == "*":
		return matcher{prefix: storagePrefix}
	case res == "*" && group == "":
		return matcher{prefix: storagePrefix, coreOnly: true}
	case res == "*":
		return matcher{prefix: storagePrefix + group + "/"}
	case group == "":
		return matcher{prefix: storagePrefix + res + "/"}
	}
	return matcher{prefix: storagePrefix + group + "/" + res + "/"}
}

func (m matcher) match(key string) bool {
	if !strings.HasPrefix(key, m.prefix) {
		return false
	}
	if !m.coreOnly {
		return true
	}
	first, _, _ := strings.Cut(key[len(m.prefix):], "/")
	return !strings.Contains(first, ".") && !ungroupedGroups[first]
}
