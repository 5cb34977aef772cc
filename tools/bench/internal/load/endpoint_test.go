package load

import (
	"testing"

	"k8s.io/client-go/rest"
)

func TestEndpointRoundRobin(t *testing.T) {
	eps := []*rest.Config{{Host: "https://127.0.0.1:1"}, {Host: "https://127.0.0.1:2"}, {Host: "https://127.0.0.1:3"}}
	for i, want := range []string{"1", "2", "3", "1", "2"} {
		got, err := Endpoint(eps, i)
		if err != nil || got.Host != "https://127.0.0.1:"+want {
			t.Fatalf("client %d -> %v (%v), want port %s", i, got, err, want)
		}
	}
	if _, err := Endpoint(nil, 0); err == nil {
		t.Fatal("no endpoints: want an error")
	}
}
