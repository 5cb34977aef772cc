package ipam

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func mustCIDR(t *testing.T, s string) *net.IPNet {
	t.Helper()
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func newStore(t *testing.T, dir, cidr string) *Store {
	t.Helper()
	s, err := New(dir, mustCIDR(t, cidr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestNewRange(t *testing.T) {
	tests := []struct {
		cidr, gw, first, last string
		size                  int
		wantErr               bool
	}{
		{cidr: "10.42.0.0/24", gw: "10.42.0.1", first: "10.42.0.2", last: "10.42.0.254", size: 253},
		{cidr: "10.42.3.77/24", gw: "10.42.3.1", first: "10.42.3.2", last: "10.42.3.254", size: 253},
		{cidr: "10.250.0.0/29", gw: "10.250.0.1", first: "10.250.0.2", last: "10.250.0.6", size: 5},
		{cidr: "10.42.0.0/16", gw: "10.42.0.1", first: "10.42.0.2", last: "10.42.255.254", size: 65533},
		{cidr: "10.0.0.0/30", wantErr: true},
		{cidr: "fd00::/64", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.cidr, func(t *testing.T) {
			_, n, err := net.ParseCIDR(tc.cidr)
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewRange(n)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidRange) {
					t.Fatalf("err = %v, want ErrInvalidRange", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Gateway.String() != tc.gw || r.Next(nil).String() != tc.first || r.Size() != tc.size {
				t.Fatalf("range %s: gw %s first %s size %d", r, r.Gateway, r.Next(nil), r.Size())
			}
			last := net.ParseIP(tc.last)
			if !r.Contains(last) || r.Next(last).String() != tc.first {
				t.Fatalf("last %s not in range or no wrap: %s", last, r)
			}
			if r.Contains(r.Gateway) || r.Contains(r.Subnet.IP) {
				t.Fatalf("gateway or network address allocatable: %s", r)
			}
		})
	}
}

func TestAllocateSequenceAndIdempotence(t *testing.T) {
	s := newStore(t, t.TempDir(), "10.250.0.0/24")
	tests := []struct{ owner, want string }{
		{"pod-a", "10.250.0.2"},
		{"pod-b", "10.250.0.3"},
		{"pod-a", "10.250.0.2"}, // same owner keeps its IP
		{"pod-c", "10.250.0.4"},
	}
	for _, tc := range tests {
		ip, err := s.Allocate(tc.owner)
		if err != nil || ip.String() != tc.want {
			t.Fatalf("Allocate(%s) = %v, %v; want %s", tc.owner, ip, err, tc.want)
		}
	}
	ip, ok, err := s.Get("pod-b")
	if err != nil || !ok || ip.String() != "10.250.0.3" {
		t.Fatalf("Get(pod-b) = %v %v %v", ip, ok, err)
	}
	if _, ok, _ := s.Get("nobody"); ok {
		t.Fatal("Get(nobody) found an IP")
	}
}

func TestInvalidOwner(t *testing.T) {
	s := newStore(t, t.TempDir(), "10.250.0.0/24")
	for _, owner := range []string{"", "a\nb", "x\r"} {
		if _, err := s.Allocate(owner); !errors.Is(err, ErrInvalidOwner) {
			t.Errorf("Allocate(%q) err = %v", owner, err)
		}
		if err := s.Release(owner); !errors.Is(err, ErrInvalidOwner) {
			t.Errorf("Release(%q) err = %v", owner, err)
		}
	}
}

func TestExhaustionAndReuseAfterRelease(t *testing.T) {
	s := newStore(t, t.TempDir(), "10.250.0.0/29") // 5 addresses: .2-.6
	for i := 0; i < 5; i++ {
		if _, err := s.Allocate(fmt.Sprintf("pod-%d", i)); err != nil {
			t.Fatalf("allocate %d: %v", i, err)
		}
	}
	if _, err := s.Allocate("one-too-many"); !errors.Is(err, ErrExhausted) {
		t.Fatalf("err = %v, want ErrExhausted", err)
	}
	if err := s.Release("pod-2"); err != nil { // held 10.250.0.4
		t.Fatal(err)
	}
	ip, err := s.Allocate("late")
	if err != nil || ip.String() != "10.250.0.4" {
		t.Fatalf("Allocate(late) = %v, %v; want the released 10.250.0.4", ip, err)
	}
}

func TestReleaseIsIdempotentAndNotReusedAtOnce(t *testing.T) {
	s := newStore(t, t.TempDir(), "10.250.0.0/24")
	a, _ := s.Allocate("a")
	for i := 0; i < 2; i++ {
		if err := s.Release("a"); err != nil {
			t.Fatalf("release #%d: %v", i, err)
		}
	}
	if err := s.Release("never-allocated"); err != nil {
		t.Fatal(err)
	}
	b, _ := s.Allocate("b")
	if a.Equal(b) {
		t.Fatalf("released IP %s handed out again at once", a)
	}
}

func TestRestartRecovery(t *testing.T) {
	dir := t.TempDir()
	s1 := newStore(t, dir, "10.250.0.0/24")
	want := map[string]string{}
	for _, o := range []string{"u1", "u2", "u3"} {
		ip, err := s1.Allocate(o)
		if err != nil {
			t.Fatal(err)
		}
		want[o] = ip.String()
	}
	if err := s1.Release("u2"); err != nil {
		t.Fatal(err)
	}
	s1.Close()
	// A crash leftover must be ignored and cleaned.
	if err := os.WriteFile(filepath.Join(dir, ".tmp-10.250.0.9-123"), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}

	s2 := newStore(t, dir, "10.250.0.0/24")
	list, err := s2.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Owner != "u1" || list[1].Owner != "u3" ||
		list[0].IP.String() != want["u1"] || list[1].IP.String() != want["u3"] {
		t.Fatalf("after restart: %+v, want u1=%s u3=%s", list, want["u1"], want["u3"])
	}
	ip, _ := s2.Allocate("u4") // continues after the last reserved (.4), not at .3
	if ip.String() != "10.250.0.5" {
		t.Fatalf("u4 got %s, want 10.250.0.5", ip)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func TestNoLeakAfterManyCycles(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, "10.250.0.0/28") // 13 addresses, so the range wraps many times
	if _, err := s.Allocate("resident"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		owner := fmt.Sprintf("cycle-%d", i)
		if _, err := s.Allocate(owner); err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		if err := s.Release(owner); err != nil {
			t.Fatalf("cycle %d release: %v", i, err)
		}
	}
	list, _ := s.List()
	if len(list) != 1 || list[0].Owner != "resident" {
		t.Fatalf("allocations after cycles: %+v", list)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 { // lock, last_reserved_ip, resident's IP
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("dir holds %v", names)
	}
}

func TestConcurrentAllocate(t *testing.T) {
	dir := t.TempDir()
	s1 := newStore(t, dir, "10.250.0.0/24")
	s2 := newStore(t, dir, "10.250.0.0/24") // second handle: flock path
	var wg sync.WaitGroup
	ips := make([]net.IP, 100)
	errs := make([]error, 100)
	for i := range ips {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s := s1
			if i%2 == 1 {
				s = s2
			}
			ips[i], errs[i] = s.Allocate(fmt.Sprintf("p%d", i))
		}(i)
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, ip := range ips {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if seen[ip.String()] {
			t.Fatalf("IP %s allocated twice", ip)
		}
		seen[ip.String()] = true
	}
}

// TestHintsFollowTheFiles: an owner's remembered IP is used only while its
// file still names the owner; another process's change to the directory
// (here: the file rewritten to another owner, then removed) is seen.
func TestHintsFollowTheFiles(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, "10.42.0.0/29")
	ip, err := s.Allocate("a")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.Get("a"); err != nil || !ok || !got.Equal(ip) {
		t.Fatalf("Get(a) = %v %v %v, want %v", got, ok, err, ip)
	}
	if err := os.WriteFile(filepath.Join(dir, ip.String()), []byte("b"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.Get("a"); err != nil || ok {
		t.Fatalf("Get(a) after its file names b = %v %v %v, want none", got, ok, err)
	}
	if got, ok, _ := s.Get("b"); !ok || !got.Equal(ip) {
		t.Fatalf("Get(b) = %v %v, want %v", got, ok, ip)
	}
	again, err := s.Allocate("a")
	if err != nil || again.Equal(ip) {
		t.Fatalf("Allocate(a) = %v %v, want a new IP", again, err)
	}
	if err := os.Remove(filepath.Join(dir, again.String())); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.Get("a"); err != nil || ok {
		t.Fatalf("Get(a) after its file went = %v %v %v, want none", got, ok, err)
	}
}
