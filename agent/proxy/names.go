package proxy

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// chainNames are the fixed chains' names under one prefix.
type chainNames struct {
	prefix  string
	hashLen int

	Services, NodePorts, MarkMasq, Post string // nat
	External, Forward, Firewall         string // filter (and Services)
}

// Per-service chain kinds (nat), as kube-proxy's KUBE-SVC-, KUBE-SVL-, ...
const (
	kindSVC = "SVC-"
	kindSVL = "SVL-"
	kindEXT = "EXT-"
	kindFW  = "FW-"
	kindSEP = "SEP-"
)

var serviceKinds = []string{kindSVC, kindSVL, kindEXT, kindFW, kindSEP}

func newChainNames(prefix string) chainNames {
	return chainNames{
		prefix:   prefix,
		hashLen:  min(16, maxChainName-len(prefix)-4),
		Services: prefix + "SERVICES", NodePorts: prefix + "NODEPORTS",
		MarkMasq: prefix + "MARK-MASQ", Post: prefix + "PROXY-POST",
		External: prefix + "EXTERNAL-SVC", Forward: prefix + "PROXY-FORWARD",
		Firewall: prefix + "PROXY-FIREWALL",
	}
}

// hash is kube-proxy's chain hash: base32(sha256(s)), cut to hashLen.
func (n chainNames) hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base32.StdEncoding.EncodeToString(sum[:])[:n.hashLen]
}

// servicePortChain is the chain of kind for a service port name
// ("ns/svc:port") and protocol ("tcp"), as kube-proxy's servicePortChainName.
func (n chainNames) servicePortChain(kind, portName, proto string) string {
	return n.prefix + kind + n.hash(portName+proto)
}

// endpointChain is kube-proxy's servicePortEndpointChainName.
func (n chainNames) endpointChain(portName, proto, endpoint string) string {
	return n.prefix + kindSEP + n.hash(portName+proto+endpoint)
}

// fixedNAT and fixedFilter list the fixed chains of each table.
func (n chainNames) fixedNAT() []string {
	return []string{n.Services, n.NodePorts, n.MarkMasq, n.Post}
}

func (n chainNames) fixedFilter() []string {
	return []string{n.Services, n.External, n.Forward, n.Firewall}
}

// owned reports whether chain in table is one the proxy manages (fixed or
// per-service); other chains under the prefix (the pod network's) are not.
func (n chainNames) owned(table, chain string) bool {
	fixed := n.fixedFilter()
	if table == tableNAT {
		fixed = n.fixedNAT()
	}
	for _, f := range fixed {
		if chain == f {
			return true
		}
	}
	if table != tableNAT {
		return false
	}
	rest, ok := strings.CutPrefix(chain, n.prefix)
	if !ok {
		return false
	}
	for _, k := range serviceKinds {
		if h, ok := strings.CutPrefix(rest, k); ok && len(h) == n.hashLen {
			return true
		}
	}
	return false
}
