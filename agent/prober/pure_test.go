package prober

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestThreshold(t *testing.T) {
	tests := []struct {
		name     string
		succ     int
		fail     int
		results  []Result
		decisive []bool
	}{
		{"defaults 1/3", 1, 3, []Result{Failure, Failure, Failure, Success},
			[]bool{false, false, true, true}},
		{"a success resets the failure run", 1, 2, []Result{Failure, Success, Failure, Failure},
			[]bool{false, true, false, true}},
		{"success threshold 3", 3, 1, []Result{Success, Success, Failure, Success, Success, Success},
			[]bool{false, false, true, false, false, true}},
		{"runs go on counting", 1, 2, []Result{Failure, Failure, Failure},
			[]bool{false, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var th threshold
			for i, r := range tt.results {
				if got := th.observe(r, tt.succ, tt.fail); got != tt.decisive[i] {
					t.Fatalf("result %d (%v): decisive %v, want %v", i, r, got, tt.decisive[i])
				}
			}
		})
	}
}

func TestExpandCommand(t *testing.T) {
	env := []v1.EnvVar{{Name: "PORT", Value: "8080"}, {Name: "SECRET", ValueFrom: &v1.EnvVarSource{}}}
	tests := []struct {
		in, want string
	}{
		{"curl localhost:$(PORT)/", "curl localhost:8080/"},
		{"$(MISSING)", "$(MISSING)"},
		{"$(SECRET)", "$(SECRET)"},
		{"$$(PORT)", "$(PORT)"},
		{"cost $5 $", "cost $5 $"},
		{"$(PORT", "$(PORT"},
	}
	for _, tt := range tests {
		if got := ExpandCommand([]string{tt.in}, env); !reflect.DeepEqual(got, []string{tt.want}) {
			t.Errorf("ExpandCommand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestKillMessage(t *testing.T) {
	tests := []struct {
		kind    Kind
		restart bool
		want    string
	}{
		{Liveness, true, "Container web failed liveness probe, will be restarted"},
		{Liveness, false, "Container web failed liveness probe"},
		{Startup, true, "Container web failed startup probe, will be restarted"},
	}
	for _, tt := range tests {
		if got := KillMessage("web", tt.kind, tt.restart); got != tt.want {
			t.Errorf("KillMessage(%v, %v) = %q, want %q", tt.kind, tt.restart, got, tt.want)
		}
	}
}
