package netpol

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// allow is one allowed (peer, protocol, ports) of a pod's chain.
type allow struct {
	Peer   string // CIDR; "" = any address
	Proto  string // "tcp", "udp", "sctp"; "" = any protocol
	Ports  string // "80" or "80:90"; "" = every port (of Proto)
	Policy string // "ns/name", for the rule comment
}

// podRules is what one local pod gets: when isolated in a direction, only
// the allows of that direction pass.
type podRules struct {
	Pod                     podInfo
	InIsolated, OutIsolated bool
	Ingress, Egress         []allow
}

// compiler turns a snapshot into the local pods' rules.
type compiler struct {
	s    snapshot
	warn func(msg string, err error)
}

// compile returns the rules of every local pod selected by at least one
// policy, in pod key order. Policies with selectors that do not parse are
// skipped (warn is told).
func compile(s snapshot, warn func(string, error)) []podRules {
	c := &compiler{s: s, warn: warn}
	var out []podRules
	for _, pod := range s.Pods {
		if !pod.Local {
			continue
		}
		if pr, ok := c.forPod(pod); ok {
			out = append(out, pr)
		}
	}
	return out
}

// policyTypes applies upstream's defaulting: Ingress always, Egress when
// the policy has egress rules.
func policyTypes(p *networkingv1.NetworkPolicy) (ingress, egress bool) {
	if len(p.Spec.PolicyTypes) == 0 {
		return true, len(p.Spec.Egress) > 0
	}
	for _, t := range p.Spec.PolicyTypes {
		switch t {
		case networkingv1.PolicyTypeIngress:
			ingress = true
		case networkingv1.PolicyTypeEgress:
			egress = true
		}
	}
	return ingress, egress
}

func (c *compiler) forPod(pod podInfo) (podRules, bool) {
	pr := podRules{Pod: pod}
	inSeen, outSeen := map[allow]bool{}, map[allow]bool{}
	for _, pol := range c.s.Policies {
		if pol.Namespace != pod.Namespace || !c.selects(pol, &pol.Spec.PodSelector, pod.Labels) {
			continue
		}
		name := pol.Namespace + "/" + pol.Name
		ing, eg := policyTypes(pol)
		if ing {
			pr.InIsolated = true
			for _, r := range pol.Spec.Ingress {
				pr.Ingress = appendNew(pr.Ingress, inSeen, c.ingressRule(pol, name, pod, r))
			}
		}
		if eg {
			pr.OutIsolated = true
			for _, r := range pol.Spec.Egress {
				pr.Egress = appendNew(pr.Egress, outSeen, c.egressRule(pol, name, r))
			}
		}
	}
	return pr, pr.InIsolated || pr.OutIsolated
}

// appendNew appends the allows not seen yet (same peer, protocol and ports
// from another rule or policy add nothing).
func appendNew(dst []allow, seen map[allow]bool, add []allow) []allow {
	for _, a := range add {
		k := a
		k.Policy = ""
		if !seen[k] {
			seen[k] = true
			dst = append(dst, a)
		}
	}
	return dst
}

// selects reports whether sel (of policy pol) matches lbls; a selector that
// does not parse matches nothing.
func (c *compiler) selects(pol *networkingv1.NetworkPolicy, sel *metav1.LabelSelector, lbls map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		if c.warn != nil {
			c.warn("network policy "+pol.Namespace+"/"+pol.Name+" has a bad selector", err)
		}
		return false
	}
	return s.Matches(labels.Set(lbls))
}

// portMatch is a resolved port: protocol and "N", "N:M" or "" (all).
type portMatch struct{ proto, ports string }

// ports splits a rule's ports into resolved numeric ones and named ones;
// all is true when the rule lists none (every port).
func rulePorts(ps []networkingv1.NetworkPolicyPort) (numeric []portMatch, named []networkingv1.NetworkPolicyPort, all bool) {
	if len(ps) == 0 {
		return nil, nil, true
	}
	for _, p := range ps {
		proto := protocol(p.Protocol)
		switch {
		case p.Port == nil:
			numeric = append(numeric, portMatch{proto: strings.ToLower(string(proto))})
		case p.Port.Type == intstr.String:
			named = append(named, p)
		default:
			numeric = append(numeric, portMatch{proto: strings.ToLower(string(proto)), ports: portRange(p.Port.IntVal, p.EndPort)})
		}
	}
	return numeric, named, false
}

func protocol(p *corev1.Protocol) corev1.Protocol {
	if p == nil || *p == "" {
		return corev1.ProtocolTCP
	}
	return *p
}

func portRange(port int32, end *int32) string {
	if end != nil && *end > port {
		return fmt.Sprintf("%d:%d", port, *end)
	}
	return strconv.Itoa(int(port))
}

// resolveNamed resolves named ports against one destination pod.
func resolveNamed(named []networkingv1.NetworkPolicyPort, dst podInfo) []portMatch {
	var out []portMatch
	for _, p := range named {
		proto := protocol(p.Protocol)
		if n, ok := dst.namedPort(p.Port.StrVal, proto); ok {
			out = append(out, portMatch{proto: strings.ToLower(string(proto)), ports: strconv.Itoa(int(n))})
		}
	}
	return out
}

// cross makes one allow per peer and port.
func cross(peers []string, ports []portMatch, all bool, policy string) []allow {
	if all {
		ports = []portMatch{{}}
	}
	var out []allow
	for _, peer := range peers {
		for _, p := range ports {
			out = append(out, allow{Peer: peer, Proto: p.proto, Ports: p.ports, Policy: policy})
		}
	}
	return out
}

func prefixStrings(ps []netip.Prefix) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}
