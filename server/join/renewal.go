package join

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// A node renews its certificates (agent/join.Renewer) by POSTing to
// NodeCertificatePath with no Authorization header, presenting its current
// client certificate system:node:<name> instead of a token: the answer is
// for that node only. So agents renew without the token they joined with,
// which may have been a bootstrap token that has expired since.

// errNotNodeCert refuses a certificate that is not a node's.
var errNotNodeCert = errors.New("the client certificate is not a node certificate of this cluster (system:node:<name> in system:nodes)")

// renewingNode reports whether r authenticates with a node client
// certificate of the cluster CA and no bearer token, and for which node.
func (h *Handler) renewingNode(r *http.Request) (string, bool, error) {
	if r.Header.Get("Authorization") != "" || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 || h.caPool == nil {
		return "", false, nil
	}
	c := r.TLS.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, ic := range r.TLS.PeerCertificates[1:] {
		inter.AddCert(ic)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: h.caPool, Intermediates: inter, CurrentTime: h.now(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return "", true, fmt.Errorf("%w: %w", errNotNodeCert, err)
	}
	name, ok := strings.CutPrefix(c.Subject.CommonName, NodeUserPrefix)
	if !ok || name == "" || !slices.Contains(c.Subject.Organization, NodesGroup) {
		return "", true, errNotNodeCert
	}
	return name, true, nil
}

// caPoolOf parses the CA PEM for renewingNode; nil when it cannot.
func caPoolOf(caPEM []byte) *x509.CertPool {
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(caPEM) {
		return nil
	}
	return p
}
