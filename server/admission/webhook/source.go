package webhook

import (
	"sort"
	"sync/atomic"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
)

// Source lists the webhook configurations and namespace labels.
type Source interface {
	Mutating() []*admissionregistrationv1.MutatingWebhookConfiguration
	Validating() []*admissionregistrationv1.ValidatingWebhookConfiguration
	// NamespaceLabels returns a namespace's labels; false if unknown.
	NamespaceLabels(ns string) (map[string]string, bool)
}

// informerSource is a Source over client-go's shared informers.
type informerSource struct {
	f informers.SharedInformerFactory
}

// NewSource registers the configuration and namespace informers with f
// (the server's shared cache; the caller starts it) and reads them.
func NewSource(f informers.SharedInformerFactory) Source {
	f.Admissionregistration().V1().MutatingWebhookConfigurations().Informer()
	f.Admissionregistration().V1().ValidatingWebhookConfigurations().Informer()
	f.Core().V1().Namespaces().Informer()
	return &informerSource{f: f}
}

func (s *informerSource) Mutating() []*admissionregistrationv1.MutatingWebhookConfiguration {
	l, _ := s.f.Admissionregistration().V1().MutatingWebhookConfigurations().Lister().List(labels.Everything())
	sort.Slice(l, func(i, j int) bool { return l[i].Name < l[j].Name })
	return l
}

func (s *informerSource) Validating() []*admissionregistrationv1.ValidatingWebhookConfiguration {
	l, _ := s.f.Admissionregistration().V1().ValidatingWebhookConfigurations().Lister().List(labels.Everything())
	sort.Slice(l, func(i, j int) bool { return l[i].Name < l[j].Name })
	return l
}

func (s *informerSource) NamespaceLabels(ns string) (map[string]string, bool) {
	n, err := s.f.Core().V1().Namespaces().Lister().Get(ns)
	if err != nil {
		return nil, false
	}
	return n.Labels, true
}

// Static is an in-memory Source.
type Static struct {
	MutatingConfigs   []*admissionregistrationv1.MutatingWebhookConfiguration
	ValidatingConfigs []*admissionregistrationv1.ValidatingWebhookConfiguration
	Namespaces        map[string]map[string]string
}

// Mutating implements Source.
func (s *Static) Mutating() []*admissionregistrationv1.MutatingWebhookConfiguration {
	return s.MutatingConfigs
}

// Validating implements Source.
func (s *Static) Validating() []*admissionregistrationv1.ValidatingWebhookConfiguration {
	return s.ValidatingConfigs
}

// NamespaceLabels implements Source.
func (s *Static) NamespaceLabels(ns string) (map[string]string, bool) {
	l, ok := s.Namespaces[ns]
	return l, ok
}

// lateSource is set once the loopback client exists; empty until then.
type lateSource struct {
	p atomic.Pointer[Source]
}

func (l *lateSource) get() Source {
	if p := l.p.Load(); p != nil {
		return *p
	}
	return &Static{}
}
