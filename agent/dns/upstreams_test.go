package dns

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestNameservers(t *testing.T) {
	own := []net.IP{net.ParseIP("10.43.0.10")}
	for _, tc := range []struct {
		name, conf string
		want       []string
	}{
		{"plain", "nameserver 192.0.2.53\nnameserver 2001:db8::53\n", []string{"192.0.2.53:53", "[2001:db8::53]:53"}},
		{"skips our own address and junk", "# c\nnameserver 10.43.0.10\nnameserver bogus\nnameserver 0.0.0.0\nsearch x\nnameserver 192.0.2.1\n", []string{"192.0.2.1:53"}},
		{"zone", "nameserver fe80::1%eth0\n", []string{"[fe80::1%eth0]:53"}},
		{"none", "search example.com\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nameservers([]byte(tc.conf), own); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestUpstreamsRereadOnChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(path, []byte("nameserver 192.0.2.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u := &upstreams{path: path}
	if got := u.list(); !slices.Equal(got, []string{"192.0.2.1:53"}) {
		t.Fatalf("got %q", got)
	}
	if err := os.WriteFile(path, []byte("nameserver 192.0.2.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u.checked = u.checked.Add(-recheck) // the next query re-checks the file
	u.mtime = u.mtime.Add(-1)
	if got := u.list(); !slices.Equal(got, []string{"192.0.2.2:53"}) {
		t.Fatalf("after the change: got %q", got)
	}
}

func TestLinkName(t *testing.T) {
	for in, want := range map[string]string{"": "orch-dns", "orch0": "orch-dns", "orcht1a2b3c": "orcht1a2b3c-dns"} {
		if got := LinkName(in); got != want {
			t.Errorf("LinkName(%q) = %q, want %q", in, got, want)
		}
	}
	if a, b := LinkName("averylongbridge"), LinkName("averylongbridgf"); len(a) > 15 || a == b {
		t.Errorf("long names %q, %q: want distinct names of at most 15 characters", a, b)
	}
}
