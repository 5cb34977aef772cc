package registry

import (
	"testing"
)

func TestAllResourcesRegisteredInScheme(t *testing.T) {
	s := NewScheme()
	seen := map[string]bool{}
	for _, r := range All(Config{}) {
		key := r.GroupVersion.String() + "/" + r.Resource
		if seen[key] {
			t.Fatalf("duplicate resource %s", key)
		}
		seen[key] = true
		gvks, _, err := s.ObjectKinds(r.New())
		if err != nil {
			t.Fatalf("%s: New not in scheme: %v", key, err)
		}
		found := false
		for _, g := range gvks {
			if g.GroupVersion() == r.GroupVersion && g.Kind == r.Kind {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: New() kinds %v, want %s", key, gvks, r.Kind)
		}
		lk, _, err := s.ObjectKinds(r.NewList())
		if err != nil || lk[0].Kind != r.Kind+"List" {
			t.Errorf("%s: NewList kinds %v err %v", key, lk, err)
		}
		if r.Strategy == nil {
			t.Fatalf("%s: no strategy", key)
		}
		if cols := r.Strategy.TableColumns(); cols[0].Name != "Name" && r.Resource != "events" {
			t.Errorf("%s: first column %q", key, cols[0].Name)
		}
	}
	if len(seen) != 28 {
		t.Errorf("got %d resources, want 28", len(seen))
	}
	for _, k := range []string{"autoscaling/v1, Kind=Scale", "policy/v1, Kind=Eviction", "/v1, Kind=Binding", "meta.k8s.io/v1, Kind=Table"} {
		found := false
		for gvk := range s.AllKnownTypes() {
			if gvk.String() == k {
				found = true
			}
		}
		if !found {
			t.Errorf("scheme lacks %s", k)
		}
	}
}
