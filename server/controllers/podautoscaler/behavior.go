package podautoscaler

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// The scale-up limit without spec.behavior (upstream's scaleUpLimitFactor
// and scaleUpLimitMinimum).
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

type recommendation struct {
	replicas int32
	at       time.Time
}

type scaleEvent struct {
	change   int32 // absolute
	at       time.Time
	outdated bool
}

// history is what one HPA's normalization remembers: its unstabilized
// recommendations and its scale-up and scale-down events.
type history struct {
	recommendations []recommendation
	up, down        []scaleEvent
}

// limit is a normalized replica count with the ScalingLimited reason and
// message that go with it.
type limit struct {
	replicas        int32
	reason, message string
}

// normalized is the outcome of normalizing a metric recommendation: the
// replica count, whether stabilization changed it (and why), and the
// ScalingLimited reason.
type normalized struct {
	replicas                   int32
	stabilized                 bool
	stabilizeReason, stabilMsg string
	limited                    bool
	limit                      limit
}

// normalize is upstream's normalizeDesiredReplicas (behavior == nil):
// the highest recommendation of the downscale window, then min/max and the
// scale-up limit.
func (h *history) normalize(now time.Time, window time.Duration, current, desired, minReplicas, maxReplicas int32) normalized {
	stable := h.stabilizeDown(now, window, desired)
	n := normalized{replicas: stable, stabilized: stable != desired,
		stabilizeReason: "ScaleDownStabilized", stabilMsg: "recent recommendations were higher than current one, applying the highest recent recommendation"}
	n.limit = convertWithRules(current, stable, minReplicas, maxReplicas)
	n.limited = n.limit.replicas != stable
	n.replicas = n.limit.replicas
	return n
}

// stabilizeDown returns the highest recommendation not older than window
// (including desired) and records desired, reusing an expired slot.
func (h *history) stabilizeDown(now time.Time, window time.Duration, desired int32) int32 {
	highest := desired
	cutoff := now.Add(-window)
	old := -1
	for i, r := range h.recommendations {
		if r.at.Before(cutoff) {
			old = i
		} else if r.replicas > highest {
			highest = r.replicas
		}
	}
	h.record(old, recommendation{desired, now})
	return highest
}

func (h *history) record(old int, r recommendation) {
	if old >= 0 {
		h.recommendations[old] = r
		return
	}
	h.recommendations = append(h.recommendations, r)
}

// convertWithRules is upstream's convertDesiredReplicasWithRules.
func convertWithRules(current, desired, minReplicas, maxReplicas int32) limit {
	upLimit := int32(math.Max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum))
	maxAllowed, over := maxReplicas, limit{reason: "TooManyReplicas", message: "the desired replica count is more than the maximum replica count"}
	if maxReplicas > upLimit {
		maxAllowed, over = upLimit, limit{reason: "ScaleUpLimit", message: "the desired replica count is increasing faster than the maximum scale rate"}
	}
	switch {
	case desired < minReplicas:
		return limit{minReplicas, "TooFewReplicas", "the desired replica count is less than the minimum replica count"}
	case desired > maxAllowed:
		over.replicas = maxAllowed
		return over
	}
	return limit{desired, "DesiredWithinRange", "the desired count is within the acceptable range"}
}

// normalizeWithBehavior is upstream's normalizeDesiredReplicasWithBehaviors:
// stabilize within the scale-up and scale-down windows, then apply the
// policies' rate limits and min/max. b must be defaulted.
func (h *history) normalizeWithBehavior(now time.Time, b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired, minReplicas, maxReplicas int32) normalized {
	stable, reason, msg := h.stabilizeWithBehavior(now, b, current, desired)
	n := normalized{stabilized: stable != desired, stabilizeReason: reason, stabilMsg: msg}
	n.limit = h.convertWithBehavior(now, b, current, stable, minReplicas, maxReplicas)
	n.limited = n.limit.replicas != stable
	n.replicas = n.limit.replicas
	return n
}

// stabilizeWithBehavior: the recommendation is kept between the lowest
// recommendation of the scale-up window and the highest of the scale-down
// window (starting from current); desired is recorded.
func (h *history) stabilizeWithBehavior(now time.Time, b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired int32) (int32, string, string) {
	upCutoff := now.Add(-time.Duration(*b.ScaleUp.StabilizationWindowSeconds) * time.Second)
	downCutoff := now.Add(-time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second)
	up, down, old := desired, desired, -1
	for i, r := range h.recommendations {
		if r.at.After(upCutoff) {
			up = min(up, r.replicas)
		}
		if r.at.After(downCutoff) {
			down = max(down, r.replicas)
		}
		if r.at.Before(upCutoff) && r.at.Before(downCutoff) {
			old = i
		}
	}
	rec := min(max(current, up), down)
	h.record(old, recommendation{desired, now})
	if desired >= current {
		return rec, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation"
	}
	return rec, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
}

// convertWithBehavior is upstream's convertDesiredReplicasWithBehaviorRate.
func (h *history) convertWithBehavior(now time.Time, b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired, minReplicas, maxReplicas int32) limit {
	switch {
	case desired > current:
		upLimit := max(scaleUpLimit(now, current, h.up, h.down, b.ScaleUp), current)
		maxAllowed, l := maxReplicas, limit{reason: "TooManyReplicas", message: "the desired replica count is more than the maximum replica count"}
		if maxAllowed > upLimit {
			maxAllowed, l = upLimit, limit{reason: "ScaleUpLimit", message: "the desired replica count is increasing faster than the maximum scale rate"}
		}
		if desired > maxAllowed {
			l.replicas = maxAllowed
			return l
		}
	case desired < current:
		downLimit := min(scaleDownLimit(now, current, h.up, h.down, b.ScaleDown), current)
		minAllowed, l := minReplicas, limit{reason: "TooFewReplicas", message: "the desired replica count is less than the minimum replica count"}
		if minAllowed < downLimit {
			minAllowed, l = downLimit, limit{reason: "ScaleDownLimit", message: "the desired replica count is decreasing faster than the maximum scale rate"}
		}
		if desired < minAllowed {
			l.replicas = minAllowed
			return l
		}
	}
	return limit{desired, "DesiredWithinRange", "the desired count is within the acceptable range"}
}

// changeInPeriod sums the changes of the events newer than periodSeconds.
func changeInPeriod(now time.Time, periodSeconds int32, events []scaleEvent) int32 {
	cutoff := now.Add(-time.Duration(periodSeconds) * time.Second)
	var n int32
	for _, e := range events {
		if e.at.After(cutoff) {
			n += e.change
		}
	}
	return n
}

// scaleUpLimit is the most replicas the scale-up policies allow now.
func scaleUpLimit(now time.Time, current int32, up, down []scaleEvent, rules *autoscalingv2.HPAScalingRules) int32 {
	sel := *rules.SelectPolicy
	if sel == autoscalingv2.DisabledPolicySelect {
		return current
	}
	result, pick := int32(math.MinInt32), func(a, b int32) int32 { return max(a, b) }
	if sel == autoscalingv2.MinChangePolicySelect {
		result, pick = math.MaxInt32, func(a, b int32) int32 { return min(a, b) }
	}
	for _, p := range rules.Policies {
		start := current - changeInPeriod(now, p.PeriodSeconds, up) + changeInPeriod(now, p.PeriodSeconds, down)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start + p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		result = pick(result, proposed)
	}
	return result
}

// scaleDownLimit is the fewest replicas the scale-down policies allow now.
func scaleDownLimit(now time.Time, current int32, up, down []scaleEvent, rules *autoscalingv2.HPAScalingRules) int32 {
	sel := *rules.SelectPolicy
	if sel == autoscalingv2.DisabledPolicySelect {
		return current
	}
	result, pick := int32(math.MaxInt32), func(a, b int32) int32 { return min(a, b) }
	if sel == autoscalingv2.MinChangePolicySelect {
		result, pick = math.MinInt32, func(a, b int32) int32 { return max(a, b) }
	}
	for _, p := range rules.Policies {
		start := current - changeInPeriod(now, p.PeriodSeconds, up) + changeInPeriod(now, p.PeriodSeconds, down)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start - p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

// storeScaleEvent records a rescale from prev to next for the policies'
// periods (only with spec.behavior), reusing an outdated slot.
func (h *history) storeScaleEvent(now time.Time, b *autoscalingv2.HorizontalPodAutoscalerBehavior, prev, next int32) {
	if b == nil {
		return
	}
	if next > prev {
		h.up = addEvent(h.up, now, longestPeriod(b.ScaleUp), next-prev)
		return
	}
	h.down = addEvent(h.down, now, longestPeriod(b.ScaleDown), prev-next)
}

func addEvent(events []scaleEvent, now time.Time, longest int32, change int32) []scaleEvent {
	cutoff := now.Add(-time.Duration(longest) * time.Second)
	old := -1
	for i := range events {
		if events[i].at.Before(cutoff) {
			events[i].outdated = true
		}
		if events[i].outdated {
			old = i
		}
	}
	e := scaleEvent{change: change, at: now}
	if old >= 0 {
		events[old] = e
		return events
	}
	return append(events, e)
}

func longestPeriod(rules *autoscalingv2.HPAScalingRules) int32 {
	var longest int32
	for _, p := range rules.Policies {
		longest = max(longest, p.PeriodSeconds)
	}
	return longest
}
