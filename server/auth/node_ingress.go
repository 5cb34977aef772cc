package auth

import "k8s.io/apimachinery/pkg/labels"

// IngressClass is the class of the Ingresses every orch agent serves
// (agent/ingress.ClassName); their spec.tls Secrets are readable by every
// node, one at a time by name, as the Secrets of its pods are.
const IngressClass = "orch"

// ingressTLSSecret reports whether an Ingress of class orch (or without a
// class, which the DefaultIngressClass admission may not have set) in
// namespace names the Secret in spec.tls.
func (g *PodListerGraph) ingressTLSSecret(namespace, name string) bool {
	if g.ingresses == nil {
		return false
	}
	ings, err := g.ingresses.Ingresses(namespace).List(labels.Everything())
	if err != nil {
		return false
	}
	for _, ing := range ings {
		if c := ing.Spec.IngressClassName; c != nil && *c != IngressClass {
			continue
		}
		for _, t := range ing.Spec.TLS {
			if t.SecretName == name {
				return true
			}
		}
	}
	return false
}
