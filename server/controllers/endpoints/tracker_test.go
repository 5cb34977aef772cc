package endpoints

import (
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCreatedSlices(t *testing.T) {
	var c createdSlices
	now := time.Now()
	slice := func(n string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: n}}
	}
	if c.pending("ns/a", nil, now) {
		t.Fatal("nothing created, nothing pending")
	}
	c.add("ns/a", "a-1", now)
	if !c.pending("ns/a", []*discoveryv1.EndpointSlice{slice("other")}, now) {
		t.Fatal("a created slice the cache lacks is pending")
	}
	if c.pending("ns/b", nil, now) {
		t.Fatal("another Service is not affected")
	}
	if c.pending("ns/a", []*discoveryv1.EndpointSlice{slice("a-1")}, now) || c.pending("ns/a", nil, now) {
		t.Fatal("a slice seen in the cache is forgotten")
	}
	c.add("ns/a", "a-2", now)
	if c.pending("ns/a", nil, now.Add(trackWindow+time.Second)) {
		t.Fatal("a slice never seen expires")
	}
}
