package ingress

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// certSet picks a certificate by SNI: the exact host, then a wildcard.
type certSet struct {
	exact    map[string]*tls.Certificate
	wildcard map[string]*tls.Certificate // "example.com" for "*.example.com"
}

// buildCerts maps the spec.tls hosts of the Ingresses (oldest first wins;
// an entry without hosts covers its Ingress's rule hosts) to their
// Secrets' certificates. Entries whose Secret is missing or invalid are
// skipped: those hosts get the default certificate.
func buildCerts(ings []*networkingv1.Ingress, certs map[string]*tls.Certificate) *certSet {
	cs := &certSet{exact: map[string]*tls.Certificate{}, wildcard: map[string]*tls.Certificate{}}
	for _, ing := range ings {
		for _, t := range ing.Spec.TLS {
			c := certs[ing.Namespace+"/"+t.SecretName]
			if c == nil || t.SecretName == "" {
				continue
			}
			hosts := t.Hosts
			if len(hosts) == 0 {
				hosts = ruleHosts(ing)
			}
			for _, h := range hosts {
				cs.add(strings.ToLower(h), c)
			}
		}
	}
	return cs
}

func ruleHosts(ing *networkingv1.Ingress) []string {
	var out []string
	for _, r := range ing.Spec.Rules {
		if r.Host != "" {
			out = append(out, r.Host)
		}
	}
	return out
}

func (cs *certSet) add(host string, c *tls.Certificate) {
	m := cs.exact
	if strings.HasPrefix(host, "*.") {
		m, host = cs.wildcard, host[2:]
	}
	if _, taken := m[host]; !taken {
		m[host] = c
	}
}

// Certificate returns the certificate for an SNI server name, nil when no
// Ingress has one for it.
func (t *Table) Certificate(serverName string) *tls.Certificate {
	host := strings.ToLower(strings.TrimSuffix(serverName, "."))
	if c, ok := t.certs.exact[host]; ok {
		return c
	}
	if i := strings.IndexByte(host, '.'); i > 0 {
		return t.certs.wildcard[host[i+1:]]
	}
	return nil
}

// ParseTLSSecret parses a Secret's tls.crt and tls.key.
func ParseTLSSecret(s *corev1.Secret) (*tls.Certificate, error) {
	crt, key := s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
	if len(crt) == 0 || len(key) == 0 {
		return nil, errors.New("the Secret has no tls.crt or tls.key")
	}
	c, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return &c, nil
}
