package ingress

import (
	"crypto/tls"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const (
	exact  = networkingv1.PathTypeExact
	prefix = networkingv1.PathTypePrefix
	impl   = networkingv1.PathTypeImplementationSpecific
)

func TestRoute(t *testing.T) {
	ings := []*networkingv1.Ingress{
		newIngress("a", 1, rule{"foo.example.com", []networkingv1.HTTPIngressPath{
			path(prefix, "/", "root"), path(prefix, "/aaa/bbb/", "ab"), path(exact, "/aaa/bbb", "exact"),
			path(impl, "/impl", "impl"), path(prefix, "/aaa", "a"),
		}}),
		newIngress("b", 2, rule{"*.example.com", []networkingv1.HTTPIngressPath{path(prefix, "/", "wild")}},
			rule{"", []networkingv1.HTTPIngressPath{path(prefix, "/any", "anyhost")}}),
		// younger: loses the same host and path to "a"
		newIngress("c", 3, rule{"foo.example.com", []networkingv1.HTTPIngressPath{path(prefix, "/aaa", "younger")}}),
	}
	def := newIngress("d", 4)
	def.Spec.DefaultBackend = ptr.To(svcBackend("default"))
	ings = append(ings, def)
	tab := Build(Inputs{Ingresses: ings})
	for _, tc := range []struct{ host, path, want string }{
		{"foo.example.com", "/aaa/bbb", "exact"},
		{"FOO.example.com:8080", "/aaa/bbb/", "ab"},
		{"foo.example.com", "/aaa/bbb/c", "ab"},
		{"foo.example.com", "/aaa/bbbxyz", "a"},
		{"foo.example.com", "/aaa", "a"},
		{"foo.example.com", "/aaa/", "a"},
		{"foo.example.com", "/aaab", "root"},
		{"foo.example.com", "/impl/x", "impl"},
		{"foo.example.com", "/", "root"},
		{"bar.example.com", "/x", "wild"},
		{"a.bar.example.com", "/x", "default"}, // a wildcard covers one label
		{"example.com", "/x", "default"},
		{"other.org", "/any/thing", "anyhost"},
		{"other.org", "/anything", "default"},
		{"", "/any", "anyhost"},
	} {
		b, ok := tab.Route(tc.host, tc.path)
		if !ok {
			t.Errorf("%s%s: no route, want %s", tc.host, tc.path, tc.want)
			continue
		}
		if want := "default/" + tc.want + ":80"; b.Name != want {
			t.Errorf("%s%s: routed to %s, want %s", tc.host, tc.path, b.Name, want)
		}
	}
}

func TestRouteNoDefault(t *testing.T) {
	tab := Build(Inputs{Ingresses: []*networkingv1.Ingress{
		newIngress("a", 1, rule{"foo", []networkingv1.HTTPIngressPath{path(exact, "/x", "x")}})}})
	if b, ok := tab.Route("foo", "/y"); ok {
		t.Fatalf("routed to %s, want no route (404)", b.Name)
	}
}

func TestServedClass(t *testing.T) {
	other := newIngress("other", 1, rule{"h", []networkingv1.HTTPIngressPath{path(prefix, "/", "other")}})
	other.Spec.IngressClassName = ptr.To("nginx")
	unset := newIngress("unset", 2, rule{"h", []networkingv1.HTTPIngressPath{path(prefix, "/", "unset")}})
	unset.Spec.IngressClassName = nil
	for _, def := range []bool{false, true} {
		b, ok := Build(Inputs{Ingresses: []*networkingv1.Ingress{other, unset}, DefaultClass: def}).Route("h", "/")
		if ok != def || (ok && b.Name != "default/unset:80") {
			t.Errorf("default class %v: route %v %v", def, b, ok)
		}
	}
}

func TestServedLegacyAnnotation(t *testing.T) {
	ing := newIngress("a", 1)
	ing.Spec.IngressClassName = nil
	ing.Annotations = map[string]string{"kubernetes.io/ingress.class": ClassName}
	if !Served(ing, false) {
		t.Error("annotation kubernetes.io/ingress.class: orch not served")
	}
	ing.Annotations["kubernetes.io/ingress.class"] = "nginx"
	if Served(ing, true) {
		t.Error("annotation kubernetes.io/ingress.class: nginx served")
	}
}

func TestBackendAddresses(t *testing.T) {
	svc, sl := service("web", "10.42.0.5", "10.42.0.4")
	sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.42.0.9"},
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(true)}})
	named := newIngress("n", 1, rule{"n", []networkingv1.HTTPIngressPath{path(prefix, "/", "web")}})
	named.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port = networkingv1.ServiceBackendPort{Name: "http"}
	ings := []*networkingv1.Ingress{named,
		newIngress("m", 2, rule{"m", []networkingv1.HTTPIngressPath{path(prefix, "/", "missing")}})}
	tab := Build(Inputs{Ingresses: ings, Services: []*corev1.Service{svc}, Slices: []*discoveryv1.EndpointSlice{sl}})
	b, _ := tab.Route("n", "/")
	if got := b.Addrs; len(got) != 2 || got[0] != "10.42.0.4:8080" || got[1] != "10.42.0.5:8080" {
		t.Fatalf("addresses %v, want the two ready ones", got)
	}
	if first, second, third := b.Pick(), b.Pick(), b.Pick(); first == second || first != third {
		t.Errorf("not round-robin: %s %s %s", first, second, third)
	}
	if b, _ := tab.Route("m", "/"); len(b.Addrs) != 0 || b.Pick() != "" {
		t.Errorf("missing Service: addresses %v", b.Addrs)
	}
	// Only terminating-but-serving endpoints left: they are used.
	for i := range sl.Endpoints {
		sl.Endpoints[i].Conditions = discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(i == 2)}
	}
	tab = Build(Inputs{Ingresses: ings, Services: []*corev1.Service{svc}, Slices: []*discoveryv1.EndpointSlice{sl}})
	if b, _ := tab.Route("n", "/"); len(b.Addrs) != 1 || b.Addrs[0] != "10.42.0.9:8080" {
		t.Errorf("serving fallback: %v", b.Addrs)
	}
}

func TestDeletedIngressIgnored(t *testing.T) {
	ing := newIngress("a", 1, rule{"h", []networkingv1.HTTPIngressPath{path(prefix, "/", "x")}})
	ing.DeletionTimestamp = ptr.To(metav1.Now())
	if _, ok := Build(Inputs{Ingresses: []*networkingv1.Ingress{ing}}).Route("h", "/"); ok {
		t.Fatal("a deleting Ingress is still routed")
	}
}

func TestCertificateBySNI(t *testing.T) {
	_, _, foo := selfSigned(t, "foo.example.com")
	_, _, wild := selfSigned(t, "*.example.com")
	_, _, rulesOnly := selfSigned(t, "r.org")
	a := newIngress("a", 1, rule{"foo.example.com", nil})
	a.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"foo.example.com"}, SecretName: "foo"},
		{Hosts: []string{"*.example.com"}, SecretName: "wild"}, {Hosts: []string{"gone.org"}, SecretName: "missing"}}
	b := newIngress("b", 2, rule{"r.org", nil})
	b.Spec.TLS = []networkingv1.IngressTLS{{SecretName: "rules"}}
	tab := Build(Inputs{Ingresses: []*networkingv1.Ingress{a, b},
		Certs: map[string]*tls.Certificate{"default/foo": foo, "default/wild": wild, "default/rules": rulesOnly}})
	for _, tc := range []struct {
		sni  string
		want *tls.Certificate
	}{{"foo.example.com", foo}, {"FOO.example.com.", foo}, {"bar.example.com", wild}, {"x.bar.example.com", nil},
		{"r.org", rulesOnly}, {"gone.org", nil}, {"", nil}} {
		if got := tab.Certificate(tc.sni); got != tc.want {
			t.Errorf("SNI %q: wrong certificate", tc.sni)
		}
	}
}

func TestParseTLSSecret(t *testing.T) {
	crt, key, _ := selfSigned(t, "x")
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"},
		Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}}
	if _, err := ParseTLSSecret(s); err != nil {
		t.Fatal(err)
	}
	s.Data[corev1.TLSPrivateKeyKey] = []byte("garbage")
	if _, err := ParseTLSSecret(s); err == nil {
		t.Fatal("a bad key parsed")
	}
	delete(s.Data, corev1.TLSCertKey)
	if _, err := ParseTLSSecret(s); err == nil {
		t.Fatal("a Secret without tls.crt parsed")
	}
}
