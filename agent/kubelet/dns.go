package kubelet

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// DNS is the cluster DNS setup pods get with dnsPolicy ClusterFirst.
type DNS struct {
	ClusterDNS    string // 10.43.0.10
	ClusterDomain string // cluster.local
	HostResolv    string // the host's resolv.conf (default /etc/resolv.conf)
}

// podHostname is the pod's hostname and its FQDN when it has a subdomain.
func podHostname(pod *corev1.Pod, domain string) (string, string) {
	h := pod.Spec.Hostname
	if h == "" {
		h = pod.Name
	}
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	if pod.Spec.Subdomain == "" {
		return h, ""
	}
	return h, fmt.Sprintf("%s.%s.%s.svc.%s", h, pod.Spec.Subdomain, pod.Namespace, domain)
}

// hostsFile is kubelet's managed /etc/hosts for a pod with podIP.
func hostsFile(pod *corev1.Pod, podIP, domain string) []byte {
	var b bytes.Buffer
	b.WriteString("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")
	host, fqdn := podHostname(pod, domain)
	if podIP != "" {
		if fqdn != "" {
			fmt.Fprintf(&b, "%s\t%s\t%s\n", podIP, fqdn, host)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", podIP, host)
		}
	}
	if len(pod.Spec.HostAliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range pod.Spec.HostAliases {
			fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	return b.Bytes()
}

type resolvConf struct {
	nameservers, searches, options []string
}

// Limits of a pod's resolv.conf, as kubelet's (validation.MaxDNSNameservers,
// MaxDNSSearchPaths, MaxDNSSearchListChars).
const (
	maxNameservers  = 3
	maxSearches     = 32
	maxSearchChars  = 2048
	systemdResolved = "/run/systemd/resolve/resolv.conf"
)

// parseResolv reads resolv.conf as kubelet does: search domains without
// their trailing dot ("." dropped), options merged by name.
func parseResolv(data []byte) resolvConf {
	var r resolvConf
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || strings.HasPrefix(f[0], "#") || strings.HasPrefix(f[0], ";") {
			continue
		}
		switch f[0] {
		case "nameserver":
			r.nameservers = append(r.nameservers, f[1])
		case "search", "domain":
			r.searches = nil
			for _, d := range f[1:] {
				if d != "." {
					r.searches = append(r.searches, strings.TrimSuffix(d, "."))
				}
			}
		case "options":
			r.options = mergeOptions(r.options, optionsOf(f[1:]))
		}
	}
	return r
}

func optionsOf(in []string) []corev1.PodDNSConfigOption {
	out := make([]corev1.PodDNSConfigOption, 0, len(in))
	for _, o := range in {
		name, value, ok := strings.Cut(o, ":")
		opt := corev1.PodDNSConfigOption{Name: name}
		if ok {
			opt.Value = &value
		}
		out = append(out, opt)
	}
	return out
}

// dnsPolicy is the policy kubelet applies: ClusterFirst on a hostNetwork
// pod, or without a cluster DNS IP, is Default.
func dnsPolicy(pod *corev1.Pod, dns DNS) corev1.DNSPolicy {
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = corev1.DNSClusterFirst
	}
	if policy == corev1.DNSClusterFirst && pod.Spec.HostNetwork {
		policy = corev1.DNSDefault
	}
	if (policy == corev1.DNSClusterFirst || policy == corev1.DNSClusterFirstWithHostNet) && dns.ClusterDNS == "" {
		policy = corev1.DNSDefault
	}
	return policy
}

// resolvFile is the pod's /etc/resolv.conf for its dnsPolicy, as kubelet's
// dns configurer builds it.
func resolvFile(pod *corev1.Pod, dns DNS, hostResolv []byte) []byte {
	var r resolvConf
	switch dnsPolicy(pod, dns) {
	case corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet:
		d := dns.ClusterDomain
		host := parseResolv(hostResolv)
		r = resolvConf{nameservers: []string{dns.ClusterDNS},
			searches: append([]string{pod.Namespace + ".svc." + d, "svc." + d, d}, host.searches...),
			options:  []string{"ndots:5"}}
	case corev1.DNSDefault:
		r = parseResolv(hostResolv)
	}
	if c := pod.Spec.DNSConfig; c != nil {
		r.nameservers = append(r.nameservers, c.Nameservers...)
		r.searches = append(r.searches, c.Searches...)
		r.options = mergeOptions(r.options, c.Options)
	}
	var b bytes.Buffer
	if s := limitSearches(dedupe(r.searches)); len(s) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(s, " "))
	}
	ns := dedupe(r.nameservers)
	for _, n := range ns[:min(len(ns), maxNameservers)] {
		fmt.Fprintf(&b, "nameserver %s\n", n)
	}
	if len(r.options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(r.options, " "))
	}
	return b.Bytes()
}

// limitSearches cuts the search list to kubelet's limits (32 domains,
// 2048 characters), as kubelet does before it reports an event.
func limitSearches(in []string) []string {
	n := 0
	for i, s := range in {
		if i == maxSearches || n+len(s)+min(i, 1) > maxSearchChars {
			return in[:i]
		}
		n += len(s) + min(i, 1)
	}
	return in
}

// hostResolvFor reads the host's resolv.conf for a pod; when it names only
// loopback nameservers (systemd-resolved's stub) and the pod has its own
// network namespace, where those are unreachable, systemd-resolved's list
// of real upstreams is used instead, as k3s does.
func hostResolvFor(pod *corev1.Pod, path string) []byte {
	data, _ := os.ReadFile(path)
	if pod.Spec.HostNetwork || !onlyLoopback(parseResolv(data).nameservers) {
		return data
	}
	if alt, err := os.ReadFile(systemdResolved); err == nil && !onlyLoopback(parseResolv(alt).nameservers) {
		return alt
	}
	return data
}

func onlyLoopback(servers []string) bool {
	for _, s := range servers {
		if ip := net.ParseIP(s); ip == nil || !ip.IsLoopback() {
			return false
		}
	}
	return len(servers) > 0
}

func mergeOptions(have []string, add []corev1.PodDNSConfigOption) []string {
	idx := map[string]int{}
	out := append([]string(nil), have...)
	for i, o := range out {
		idx[strings.SplitN(o, ":", 2)[0]] = i
	}
	for _, o := range add {
		s := o.Name
		if o.Value != nil {
			s += ":" + *o.Value
		}
		if i, ok := idx[o.Name]; ok {
			out[i] = s
			continue
		}
		idx[o.Name] = len(out)
		out = append(out, s)
	}
	return out
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// podFiles are the host paths of a pod's managed files.
type podFiles struct {
	Hosts, Resolv, Hostname string
}

// writePodFiles writes /etc/hosts, /etc/resolv.conf and /etc/hostname of the
// pod under dir (<pods-dir>/<uid>).
func writePodFiles(dir string, pod *corev1.Pod, podIP string, dns DNS) (podFiles, error) {
	f := podFiles{Hosts: filepath.Join(dir, "etc-hosts"), Resolv: filepath.Join(dir, "resolv.conf"), Hostname: filepath.Join(dir, "hostname")}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return f, fmt.Errorf("creating pod dir: %w", err)
	}
	hostResolvPath := dns.HostResolv
	if hostResolvPath == "" {
		hostResolvPath = "/etc/resolv.conf"
	}
	hostResolv := hostResolvFor(pod, hostResolvPath)
	hosts := hostsFile(pod, podIP, dns.ClusterDomain)
	host, _ := podHostname(pod, dns.ClusterDomain)
	if pod.Spec.HostNetwork {
		// The host's files: the pod shares its network and UTS namespaces.
		if b, err := os.ReadFile("/etc/hosts"); err == nil {
			hosts = b
		}
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	for path, data := range map[string][]byte{f.Hosts: hosts, f.Resolv: resolvFile(pod, dns, hostResolv), f.Hostname: []byte(host + "\n")} {
		if err := writeIfChanged(path, data); err != nil {
			return f, err
		}
	}
	return f, nil
}

func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
