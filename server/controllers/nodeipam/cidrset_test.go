package nodeipam

import (
	"errors"
	"net/netip"
	"testing"
)

func TestNewCIDRSet(t *testing.T) {
	tests := []struct {
		cluster string
		mask    int
		free    int
		wantErr bool
	}{
		{"10.42.0.0/16", 24, 256, false},
		{"10.42.0.0/16", 16, 1, false},
		{"10.42.0.0/16", 15, 0, true},
		{"10.42.0.0/16", 33, 0, true},
		{"10.0.0.0/8", 25, 0, true}, // more than 2^16 subnets
		{"fd00:42::/48", 64, 65536, false},
	}
	for _, tt := range tests {
		s, err := NewCIDRSet(netip.MustParsePrefix(tt.cluster), tt.mask)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s /%d: err %v, wantErr %v", tt.cluster, tt.mask, err, tt.wantErr)
			continue
		}
		if err == nil && s.Free() != tt.free {
			t.Errorf("%s /%d: free %d want %d", tt.cluster, tt.mask, s.Free(), tt.free)
		}
	}
}

func TestCIDRSetAllocateOccupyRelease(t *testing.T) {
	s, err := NewCIDRSet(netip.MustParsePrefix("10.42.0.0/22"), 24)
	if err != nil {
		t.Fatal(err)
	}
	must := func(p netip.Prefix, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p.String()
	}
	if ok, err := s.Occupy(netip.MustParsePrefix("10.42.1.0/24")); !ok || err != nil {
		t.Fatalf("occupy: %v %v", ok, err)
	}
	if ok, _ := s.Occupy(netip.MustParsePrefix("10.42.1.0/24")); ok {
		t.Fatal("occupying twice reported free")
	}
	got := []string{must(s.AllocateNext()), must(s.AllocateNext()), must(s.AllocateNext())}
	want := []string{"10.42.0.0/24", "10.42.2.0/24", "10.42.3.0/24"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("allocations %v want %v", got, want)
		}
	}
	if _, err := s.AllocateNext(); !errors.Is(err, ErrExhausted) {
		t.Fatalf("want ErrExhausted, got %v", err)
	}
	if err := s.Release(netip.MustParsePrefix("10.42.2.0/24")); err != nil {
		t.Fatal(err)
	}
	if p := must(s.AllocateNext()); p != "10.42.2.0/24" {
		t.Fatalf("after release got %s", p)
	}
	for _, bad := range []string{"10.43.0.0/24", "10.42.0.0/25", "10.42.0.128/24"} {
		if _, err := s.Occupy(netip.PrefixFrom(netip.MustParsePrefix(bad).Addr(), netip.MustParsePrefix(bad).Bits())); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("occupy %s: want ErrOutOfRange, got %v", bad, err)
		}
	}
}

func TestCIDRSetIPv6(t *testing.T) {
	s, err := NewCIDRSet(netip.MustParsePrefix("fd00:42::/62"), 64)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.AllocateNext()
	q, _ := s.AllocateNext()
	if p.String() != "fd00:42::/64" || q.String() != "fd00:42:0:1::/64" {
		t.Fatalf("got %v %v", p, q)
	}
}
