package dns

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// systemdResolv lists systemd-resolved's real upstreams; it is used when
// the host's resolv.conf names only its local stub (as kubelet users pass
// --resolv-conf and k3s does by itself).
const systemdResolv = "/run/systemd/resolve/resolv.conf"

// upstreams are the host's nameservers, re-read when resolv.conf changes
// (checked at most every recheck, and only when a query is forwarded).
type upstreams struct {
	path    string
	fixed   []string // Config.Upstreams: used as given
	exclude []net.IP // our own addresses: forwarding to them would loop

	mu      sync.Mutex
	checked time.Time
	mtime   time.Time
	servers []string
}

const recheck = 5 * time.Second

func (u *upstreams) list() []string {
	if len(u.fixed) > 0 {
		return u.fixed
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if time.Since(u.checked) < recheck && u.servers != nil {
		return u.servers
	}
	u.checked = time.Now()
	st, err := os.Stat(u.path)
	if err != nil || (st.ModTime().Equal(u.mtime) && u.servers != nil) {
		return u.servers
	}
	u.mtime = st.ModTime()
	data, _ := os.ReadFile(u.path)
	u.servers = nameservers(data, u.exclude)
	if allLoopback(u.servers) {
		if alt, err := os.ReadFile(systemdResolv); err == nil {
			if s := nameservers(alt, u.exclude); len(s) > 0 {
				u.servers = s
			}
		}
	}
	return u.servers
}

// nameservers are the host:port of resolv.conf's nameservers, without the
// excluded addresses (ours).
func nameservers(data []byte, exclude []net.IP) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "nameserver" {
			continue
		}
		host, _, _ := strings.Cut(f[1], "%") // fe80::1%eth0: keep the zone out of ParseIP
		ip := net.ParseIP(host)
		if ip == nil || ip.IsUnspecified() || containsIP(exclude, ip) {
			continue
		}
		out = append(out, net.JoinHostPort(f[1], "53"))
	}
	return out
}

func allLoopback(servers []string) bool {
	for _, s := range servers {
		h, _, _ := net.SplitHostPort(s)
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return false
		}
	}
	return len(servers) > 0
}

func containsIP(list []net.IP, ip net.IP) bool {
	for _, x := range list {
		if x.Equal(ip) {
			return true
		}
	}
	return false
}
