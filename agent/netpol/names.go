package netpol

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// chainNames names the chains under one prefix.
type chainNames struct {
	prefix  string
	hashLen int
	// Main is P NETPOL, jumped to from FORWARD.
	Main string
}

const (
	kindIn  = "NP-IN-"
	kindOut = "NP-OUT-"
)

func newChainNames(prefix string) chainNames {
	return chainNames{prefix: prefix, hashLen: min(16, maxChainName-len(prefix)-len(kindOut)),
		Main: prefix + "NETPOL"}
}

// hash is base32(sha256(s)) cut to hashLen, as kube-proxy names chains.
func (n chainNames) hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base32.StdEncoding.EncodeToString(sum[:])[:n.hashLen]
}

// podChain is the ingress or egress chain of the pod "ns/name".
func (n chainNames) podChain(egress bool, key string) string {
	if egress {
		return n.prefix + kindOut + n.hash(key)
	}
	return n.prefix + kindIn + n.hash(key)
}

// owned reports whether a filter chain is one this package manages.
func (n chainNames) owned(chain string) bool {
	if chain == n.Main {
		return true
	}
	rest, ok := strings.CutPrefix(chain, n.prefix)
	if !ok {
		return false
	}
	for _, k := range []string{kindIn, kindOut} {
		if h, ok := strings.CutPrefix(rest, k); ok && len(h) == n.hashLen {
			return true
		}
	}
	return false
}
