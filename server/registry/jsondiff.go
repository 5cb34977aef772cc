package registry

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// firstDifference returns the JSON path (below base) of the first field that
// differs between a and b, or base itself when that cannot be narrowed down.
// It stands in for the unified diff upstream puts in "may not change" messages.
func firstDifference(base string, a, b interface{}) string {
	var x, y interface{}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil || json.Unmarshal(ja, &x) != nil || json.Unmarshal(jb, &y) != nil {
		return base
	}
	if p, ok := diffPath(base, x, y); ok {
		return p
	}
	return base
}

func diffPath(p string, a, b interface{}) (string, bool) {
	if reflect.DeepEqual(a, b) {
		return "", false
	}
	switch av := a.(type) {
	case map[string]interface{}:
		bv, ok := b.(map[string]interface{})
		if !ok {
			return p, true
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if q, ok := diffPath(p+"."+k, av[k], bv[k]); ok {
				return q, true
			}
		}
	case []interface{}:
		bv, ok := b.([]interface{})
		if !ok || len(av) != len(bv) {
			return p, true
		}
		for i := range av {
			if q, ok := diffPath(fmt.Sprintf("%s[%d]", p, i), av[i], bv[i]); ok {
				return q, true
			}
		}
	}
	return p, true
}
