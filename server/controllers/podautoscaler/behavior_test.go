package podautoscaler

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"

	autoscalingreg "github.com/orch/orch/server/registry/autoscaling"
)

// The cases are upstream's horizontal_test.go ones (TestConvertDesiredReplicasWithRules,
// TestScalingWithRules, TestNormalizeDesiredReplicasWithBehavior, …).

func rules(pods, podsPeriod, percent, percentPeriod, window int32) *autoscalingv2.HPAScalingRules {
	r := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(window), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect)}
	if pods != 0 {
		r.Policies = append(r.Policies, autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: pods, PeriodSeconds: podsPeriod})
	}
	if percent != 0 {
		r.Policies = append(r.Policies, autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: percent, PeriodSeconds: percentPeriod})
	}
	return r
}

// spread puts the events in the middle of equal segments of the last
// periodSeconds (upstream's generateEventsUniformDistribution).
func spread(now time.Time, changes []int32, periodSeconds int) []scaleEvent {
	out := make([]scaleEvent, len(changes))
	seg := float64(periodSeconds) / float64(len(changes))
	for i, c := range changes {
		back := time.Duration(float64(periodSeconds) - seg*float64(i+1) + seg/2)
		out[i] = scaleEvent{change: c, at: now.Add(-time.Second * back)}
	}
	return out
}

// behavior defaults up and down as the API server does.
func behavior(up, down *autoscalingv2.HPAScalingRules) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	h := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: up, ScaleDown: down}}}
	autoscalingreg.DefaultBehavior(h)
	if h.Spec.Behavior.ScaleDown.StabilizationWindowSeconds == nil {
		h.Spec.Behavior.ScaleDown.StabilizationWindowSeconds = ptr.To(int32(300))
	}
	return h.Spec.Behavior
}

func TestConvertWithRules(t *testing.T) {
	cases := []struct {
		current, desired, min, max, want int32
		reason                           string
	}{
		{5, 7, 3, 8, 7, "DesiredWithinRange"},
		{3, 1, 2, 8, 2, "TooFewReplicas"},
		{1, 0, 0, 10, 0, "DesiredWithinRange"},
		{20, 1000, 1, 10, 10, "TooManyReplicas"},
		{3, 1000, 1, 2000, 6, "ScaleUpLimit"},
		{1, 1000, 1, 2000, 4, "ScaleUpLimit"},
	}
	for _, tc := range cases {
		got := convertWithRules(tc.current, tc.desired, tc.min, tc.max)
		if got.replicas != tc.want || got.reason != tc.reason {
			t.Errorf("%+v: got %d %s", tc, got.replicas, got.reason)
		}
	}
}

func TestScaleLimitsMinPolicy(t *testing.T) {
	r := rules(2, 60, 50, 60, 300)
	r.SelectPolicy = ptr.To(autoscalingv2.MinChangePolicySelect)
	now := time.Now()
	if got := scaleUpLimit(now, 1, nil, nil, r); got != 2 {
		t.Errorf("scale-up limit %d, want 2", got)
	}
	if got := scaleDownLimit(now, 5, nil, nil, r); got != 3 {
		t.Errorf("scale-down limit %d, want 3", got)
	}
	r.SelectPolicy = ptr.To(autoscalingv2.DisabledPolicySelect)
	if got := scaleUpLimit(now, 5, nil, nil, r); got != 5 {
		t.Errorf("disabled scale-up limit %d, want 5", got)
	}
}

func TestConvertWithBehavior(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name             string
		up, down         []scaleEvent
		min, max         int32
		upR, downR       *autoscalingv2.HPAScalingRules
		current, desired int32
		want             int32
		reason           string
	}{
		{name: "within range", current: 5, desired: 7, min: 3, max: 8, want: 7, reason: "DesiredWithinRange"},
		{name: "below min", current: 3, desired: 1, min: 2, max: 8, want: 2, reason: "TooFewReplicas"},
		{name: "max below scale-up limit", current: 20, desired: 1000, min: 1, max: 10, want: 10, reason: "TooManyReplicas"},
		{name: "user policy limit", current: 3, desired: 1000, min: 1, max: 2000, upR: rules(0, 0, 1, 60, 0), want: 4, reason: "ScaleUpLimit"},
		{name: "default behavior scale-up", current: 10, desired: 50, min: 1, max: 1000, want: 20, reason: "ScaleUpLimit"},
		{name: "pods policy larger", current: 10, desired: 500, min: 1, max: 1000, upR: rules(100, 60, 100, 60, 0), want: 110, reason: "ScaleUpLimit"},
		{name: "percent policy larger", current: 10, desired: 500, min: 1, max: 1000, upR: rules(2, 60, 100, 60, 0), want: 20, reason: "ScaleUpLimit"},
		{name: "pod policy limit", current: 10, desired: 50, min: 1, max: 1000, upR: rules(30, 60, 0, 0, 0), want: 40, reason: "ScaleUpLimit"},
		{name: "percent policy limit", current: 10, desired: 50, min: 1, max: 1000, upR: rules(0, 0, 200, 60, 0), want: 30, reason: "ScaleUpLimit"},
		{name: "scale-down percent larger", current: 100, desired: 2, min: 1, max: 1000, downR: rules(20, 60, 1, 60, 300), want: 80, reason: "ScaleDownLimit"},
		{name: "scale-down pods larger", current: 100, desired: 2, min: 1, max: 1000, downR: rules(2, 60, 1, 60, 300), want: 98, reason: "ScaleDownLimit"},
		{name: "scale-down min", current: 10, desired: 2, min: 5, max: 1000, downR: rules(0, 0, 100, 60, 300), want: 5, reason: "TooFewReplicas"},
		{name: "scale-down pod limit", current: 10, desired: 2, min: 1, max: 1000, downR: rules(5, 60, 0, 0, 300), want: 5, reason: "ScaleDownLimit"},
		{name: "recent scale-ups block more", up: spread(now, []int32{1, 5, 9}, 120), current: 100, desired: 500, min: 1, max: 1000,
			upR: rules(5, 120, 0, 0, 0), want: 100, reason: "ScaleUpLimit"},
		{name: "pod policy with previous scale-ups", up: spread(now, []int32{1, 5, 9}, 120), current: 100, desired: 500, min: 1, max: 1000,
			upR: rules(150, 120, 0, 0, 0), want: 235, reason: "ScaleUpLimit"},
		{name: "percent policy with previous scale-ups", up: spread(now, []int32{1, 5, 9}, 120), current: 100, desired: 500, min: 1, max: 1000,
			upR: rules(0, 0, 200, 120, 0), want: 255, reason: "ScaleUpLimit"},
		{name: "percent policy with scale-ups and -downs", up: spread(now, []int32{4}, 120), down: spread(now, []int32{2}, 120),
			current: 6, desired: 24, min: 1, max: 1000, upR: rules(0, 0, 300, 300, 0), want: 16, reason: "ScaleUpLimit"},
		{name: "scale-down percent with previous events", down: spread(now, []int32{2, 4, 6}, 120), current: 100, desired: 0, min: 1, max: 1000,
			downR: rules(0, 0, 50, 120, 300), want: 56, reason: "ScaleDownLimit"},
		{name: "previous scale-downs block more", down: spread(now, []int32{10, 10, 10}, 120), current: 100, desired: 0, min: 1, max: 1000,
			downR: rules(0, 0, 10, 120, 300), want: 100, reason: "ScaleDownLimit"},
		{name: "scale-down with scale-ups and -downs", up: spread(now, []int32{2}, 120), down: spread(now, []int32{4}, 120),
			current: 10, desired: 1, min: 1, max: 1000, downR: rules(0, 0, 50, 180, 0), want: 6, reason: "ScaleDownLimit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &history{up: tc.up, down: tc.down}
			got := h.convertWithBehavior(now, behavior(tc.upR, tc.downR), tc.current, tc.desired, tc.min, tc.max)
			if got.replicas != tc.want || got.reason != tc.reason {
				t.Fatalf("got %d %s, want %d %s", got.replicas, got.reason, tc.want, tc.reason)
			}
		})
	}
}

func TestStabilizeWithBehavior(t *testing.T) {
	now := time.Now()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	cases := []struct {
		name             string
		recs             []recommendation
		current, desired int32
		upWin, downWin   int32
		want             int32
		wantRecs         []int32
	}{
		{"empty, scale down", nil, 100, 5, 0, 0, 5, []int32{5}},
		{"scale down stabilized", []recommendation{{4, ago(2 * time.Minute)}, {5, ago(time.Minute)}}, 100, 3, 0, 180, 5, []int32{4, 5, 3}},
		{"scale up stabilized", []recommendation{{4, ago(2 * time.Minute)}, {5, ago(time.Minute)}}, 1, 7, 300, 0, 4, []int32{4, 5, 7}},
		{"no scale down stabilization", []recommendation{{1, ago(2 * time.Minute)}, {2, ago(time.Minute)}}, 100, 3, 300, 0, 3, []int32{1, 2, 3}},
		{"no scale up stabilization", []recommendation{{4, ago(2 * time.Minute)}, {5, ago(time.Minute)}}, 1, 3, 0, 300, 3, []int32{4, 5, 3}},
		{"reuse an expired slot", []recommendation{{10, ago(10 * time.Minute)}, {9, ago(9 * time.Minute)}}, 100, 3, 0, 300, 3, []int32{10, 3}},
		{"scale down stabilized, reuse one slot", []recommendation{{10, ago(10 * time.Minute)}, {4, ago(time.Minute)}, {5, ago(2 * time.Minute)},
			{9, ago(9 * time.Minute)}}, 100, 3, 0, 180, 5, []int32{10, 4, 5, 3}},
		{"no scale up when the recommendation goes down", []recommendation{{2, ago(100 * time.Minute)}, {3, ago(3 * time.Minute)}},
			2, 1, 300, 300, 2, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &history{recommendations: append([]recommendation(nil), tc.recs...)}
			b := behavior(rules(4, 15, 100, 15, tc.upWin), rules(0, 0, 100, 15, tc.downWin))
			got, _, _ := h.stabilizeWithBehavior(now, b, tc.current, tc.desired)
			if got != tc.want {
				t.Fatalf("got %d, want %d", got, tc.want)
			}
			if tc.wantRecs == nil {
				return
			}
			var recs []int32
			for _, r := range h.recommendations {
				recs = append(recs, r.replicas)
			}
			if len(recs) != len(tc.wantRecs) {
				t.Fatalf("recommendations %v, want %v", recs, tc.wantRecs)
			}
			for i := range recs {
				if recs[i] != tc.wantRecs[i] {
					t.Fatalf("recommendations %v, want %v", recs, tc.wantRecs)
				}
			}
		})
	}
}

// TestNormalizeWithoutBehavior: the 5 min downscale window keeps the
// highest recent recommendation, then the bounds apply.
func TestNormalizeWithoutBehavior(t *testing.T) {
	now := time.Now()
	h := &history{recommendations: []recommendation{{5, now.Add(-4 * time.Minute)}, {8, now.Add(-6 * time.Minute)}}}
	n := h.normalize(now, 5*time.Minute, 5, 2, 1, 10)
	if n.replicas != 5 || !n.stabilized || n.limited || n.limit.reason != "DesiredWithinRange" {
		t.Fatalf("stabilized: %+v", n)
	}
	// The expired 8 was replaced by 2; six minutes on, only 2 is left.
	n = h.normalize(now.Add(6*time.Minute), 5*time.Minute, 5, 1, 2, 10)
	if n.replicas != 2 || !n.limited || n.limit.reason != "TooFewReplicas" {
		t.Fatalf("after the window: %+v %+v", n, h.recommendations)
	}
}

func TestStoreScaleEventReusesOutdated(t *testing.T) {
	now := time.Now()
	b := behavior(rules(4, 60, 0, 0, 0), rules(0, 0, 100, 30, 0))
	h := &history{}
	h.storeScaleEvent(now.Add(-2*time.Minute), b, 1, 3)
	h.storeScaleEvent(now, b, 3, 5)
	if len(h.up) != 1 || h.up[0].change != 2 || !h.up[0].at.Equal(now) {
		t.Fatalf("scale-up events %+v", h.up)
	}
	h.storeScaleEvent(now, b, 5, 4)
	h.storeScaleEvent(now, nil, 4, 1) // without behavior nothing is kept
	if len(h.down) != 1 || h.down[0].change != 1 {
		t.Fatalf("scale-down events %+v", h.down)
	}
	if got := changeInPeriod(now.Add(time.Second), 60, h.up); got != 2 {
		t.Fatalf("change in period %d", got)
	}
}
