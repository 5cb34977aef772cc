package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/registry"
)

const kubernetesServiceName = "kubernetes"

func (s *Server) ensureKubernetesService(ctx context.Context) error {
	res := findResource(s.cfg.Resources, "", "services")
	if res == nil {
		return nil
	}
	ip := firstIP(s.cfg.ServiceCIDR).String()
	family := corev1.IPv4Protocol
	if firstIP(s.cfg.ServiceCIDR).To4() == nil {
		family = corev1.IPv6Protocol
	}
	single := corev1.IPFamilyPolicySingleStack
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: ip, ClusterIPs: []string{ip},
			Ports:           s.kubernetesServicePorts(),
			SessionAffinity: corev1.ServiceAffinityNone,
			IPFamilies:      []corev1.IPFamily{family}, IPFamilyPolicy: &single,
		},
	}
	created, err := s.createIfAbsent(ctx, res, svc, nil)
	if err != nil || created {
		if created {
			s.log.Info("bootstrap: created the kubernetes Service", zap.String("clusterIP", ip))
		}
		return err
	}
	return s.updateIfChanged(ctx, res, metav1.NamespaceDefault, kubernetesServiceName, func(o runtime.Object) bool {
		cur := o.(*corev1.Service)
		if apiequality.Semantic.DeepEqual(cur.Spec.Ports, svc.Spec.Ports) {
			return false
		}
		cur.Spec.Ports = svc.Spec.Ports
		return true
	})
}

func (s *Server) kubernetesServicePorts() []corev1.ServicePort {
	return []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443,
		TargetPort: intstr.FromInt32(int32(s.cfg.SecurePort))}}
}

func (s *Server) ensureKubernetesEndpoints(ctx context.Context) error {
	res := findResource(s.cfg.Resources, "", "endpoints")
	if res == nil {
		return nil
	}
	var addrs []corev1.EndpointAddress
	for _, ip := range s.endpointIPs(ctx) {
		addrs = append(addrs, corev1.EndpointAddress{IP: ip.String()})
	}
	subsets := []corev1.EndpointSubset{{
		Addresses: addrs,
		Ports:     []corev1.EndpointPort{{Name: "https", Port: int32(s.cfg.SecurePort), Protocol: corev1.ProtocolTCP}},
	}}
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"}},
		Subsets: subsets,
	}
	if created, err := s.createIfAbsent(ctx, res, ep, nil); err != nil || created {
		return err
	}
	return s.updateIfChanged(ctx, res, metav1.NamespaceDefault, kubernetesServiceName, func(o runtime.Object) bool {
		cur := o.(*corev1.Endpoints)
		if apiequality.Semantic.DeepEqual(cur.Subsets, subsets) {
			return false
		}
		cur.Subsets = subsets
		return true
	})
}

func (s *Server) ensureKubernetesEndpointSlice(ctx context.Context) error {
	res := findResource(s.cfg.Resources, discoveryv1.GroupName, "endpointslices")
	if res == nil {
		return nil
	}
	want := s.kubernetesEndpointSlice(s.endpointIPs(ctx))
	if created, err := s.createIfAbsent(ctx, res, want.DeepCopy(), nil); err != nil || created {
		return err
	}
	return s.updateIfChanged(ctx, res, metav1.NamespaceDefault, kubernetesServiceName, func(o runtime.Object) bool {
		cur := o.(*discoveryv1.EndpointSlice)
		if cur.AddressType == want.AddressType && apiequality.Semantic.DeepEqual(cur.Endpoints, want.Endpoints) &&
			apiequality.Semantic.DeepEqual(cur.Ports, want.Ports) {
			return false
		}
		cur.AddressType, cur.Endpoints, cur.Ports = want.AddressType, want.Endpoints, want.Ports
		return true
	})
}

func (s *Server) kubernetesEndpointSlice(ips []net.IP) *discoveryv1.EndpointSlice {
	addrType := discoveryv1.AddressTypeIPv4
	if s.cfg.AdvertiseAddress.To4() == nil {
		addrType = discoveryv1.AddressTypeIPv6
	}
	ready, name, proto, port := true, "https", corev1.ProtocolTCP, int32(s.cfg.SecurePort)
	var endpoints []discoveryv1.Endpoint
	for _, ip := range ips {
		endpoints = append(endpoints, discoveryv1.Endpoint{Addresses: []string{ip.String()},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready}})
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{discoveryv1.LabelServiceName: kubernetesServiceName}},
		AddressType: addrType,
		Endpoints:   endpoints,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Protocol: &proto, Port: &port}},
	}
}

// updateIfChanged reads an object, lets change edit it and, when change
// reports an edit, writes it back through the strategy's update rules with a
// compare-and-swap on the read revision.
func (s *Server) updateIfChanged(ctx context.Context, res *registry.Resource, ns, name string, change func(runtime.Object) bool) error {
	key := res.Key(ns, name)
	kv, err := s.cfg.Store.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("bootstrap: read %s: %w", key, err)
	}
	old, err := decodeStored(res, kv)
	if err != nil {
		return err
	}
	obj := old.DeepCopyObject()
	if !change(obj) {
		return nil
	}
	res.Strategy.PrepareForUpdate(ctx, obj, old)
	if errs := res.Strategy.ValidateUpdate(ctx, obj, old); len(errs) > 0 {
		return fmt.Errorf("bootstrap: update %s: %w", key, errs.ToAggregate())
	}
	data, err := encodeStored(res, obj)
	if err != nil {
		return err
	}
	if _, err := s.cfg.Store.Update(ctx, key, data, kv.ModRevision); err != nil {
		if errors.Is(err, datastore.ErrConflict) {
			return fmt.Errorf("bootstrap: %s changed while updating, retry: %w", key, err)
		}
		return fmt.Errorf("bootstrap: update %s: %w", key, err)
	}
	s.log.Info("bootstrap: updated", zap.String("key", key), zap.Int("port", s.cfg.SecurePort))
	return nil
}

// endpointIPs are the API servers the kubernetes Service leads to: those
// Config.EndpointIPs reports live (a cluster of servers), else this one.
func (s *Server) endpointIPs(ctx context.Context) []net.IP {
	if s.cfg.EndpointIPs != nil {
		if ips := s.cfg.EndpointIPs(ctx); len(ips) > 0 {
			return ips
		}
	}
	return []net.IP{s.cfg.AdvertiseAddress}
}

// EnsureKubernetesEndpoints points the kubernetes Service's Endpoints and
// EndpointSlice at the live API servers; the leader runs it periodically.
func (s *Server) EnsureKubernetesEndpoints(ctx context.Context) error {
	if s.cfg.AdvertiseAddress == nil || s.cfg.SecurePort == 0 || s.cfg.ServiceCIDR == nil {
		return nil
	}
	return errors.Join(s.ensureKubernetesEndpoints(ctx), s.ensureKubernetesEndpointSlice(ctx))
}
