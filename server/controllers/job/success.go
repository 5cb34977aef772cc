package job

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// matchSuccessPolicy tells whether the succeeded indexes satisfy a rule of
// spec.successPolicy, and the condition message naming the first such rule
// (upstream's matchSuccessPolicy). A rule with succeededIndexes is met when
// all of them succeeded, or succeededCount of them; a rule with only
// succeededCount when that many indexes succeeded.
func matchSuccessPolicy(policy *batchv1.SuccessPolicy, completions int32, succeeded sets.Set[int]) (string, bool) {
	if policy == nil || succeeded.Len() == 0 {
		return "", false
	}
	for i, rule := range policy.Rules {
		met := false
		switch {
		case rule.SucceededIndexes != nil:
			required := parseIndexes(*rule.SucceededIndexes, int(completions))
			if required.Len() == 0 {
				continue // unparsable: validation keeps these out
			}
			got := required.Intersection(succeeded).Len()
			met = got == required.Len() || (rule.SucceededCount != nil && got >= int(*rule.SucceededCount))
		case rule.SucceededCount != nil:
			met = succeeded.Len() >= int(*rule.SucceededCount)
		}
		if met {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}
