package network

import (
	"context"
	"testing"
)

func TestFake(t *testing.T) {
	f, err := NewFake("10.42.0.0/29")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, _ := f.SetupPod(ctx, PodNet{ID: "a"})
	b, _ := f.SetupPod(ctx, PodNet{ID: "b"})
	again, _ := f.SetupPod(ctx, PodNet{ID: "a"})
	if a.IP.String() != "10.42.0.2/29" || b.IP.String() != "10.42.0.3/29" || again != a {
		t.Fatalf("a=%s b=%s again=%s", a.IP, b.IP, again.IP)
	}
	for _, id := range []string{"c", "d", "e"} {
		if _, err := f.SetupPod(ctx, PodNet{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.SetupPod(ctx, PodNet{ID: "f"}); err == nil {
		t.Fatal("sixth pod in a /29 got an address")
	}
	_ = f.TeardownPod(ctx, "b")
	_ = f.TeardownPod(ctx, "b")
	if ids, _ := f.PodIDs(); len(ids) != 4 {
		t.Fatalf("PodIDs = %v", ids)
	}
}
