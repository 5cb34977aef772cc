package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/registry"
)

// systemNamespaces are the namespaces every cluster has.
var systemNamespaces = []string{
	metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease,
}

// Bootstrap creates what kube-apiserver creates at start: the system
// namespaces, the default ServiceCIDR "kubernetes" of ServiceCIDR and, in
// default, the `kubernetes` Service with its Endpoints and EndpointSlice
// pointing at AdvertiseAddress:SecurePort. It is
// idempotent and updates the endpoints when the address or port changed.
// It writes, so call it on the Raft leader.
func (s *Server) Bootstrap(ctx context.Context) error {
	for _, ns := range systemNamespaces {
		if err := s.ensureNamespace(ctx, ns); err != nil {
			return err
		}
	}
	if err := errors.Join(s.ensureExtensionAuthConfigMap(ctx), s.ensureLocalAPIServices(ctx)); err != nil {
		return err
	}
	if s.cfg.AdvertiseAddress == nil || s.cfg.SecurePort == 0 || s.cfg.ServiceCIDR == nil {
		s.log.Warn("bootstrap: no advertise address, secure port or service CIDR; not creating the kubernetes Service")
		return nil
	}
	if err := s.ensureDefaultServiceCIDR(ctx); err != nil {
		return err
	}
	if err := s.ensureKubernetesService(ctx); err != nil {
		return err
	}
	if err := s.ensureKubernetesEndpoints(ctx); err != nil {
		return err
	}
	return errors.Join(s.ensureKubernetesEndpointSlice(ctx), s.ensureDNSService(ctx))
}

func (s *Server) ensureNamespace(ctx context.Context, name string) error {
	res := findResource(s.cfg.Resources, "", "namespaces")
	if res == nil {
		return errors.New("bootstrap: the namespaces resource is not served")
	}
	ns := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelMetadataName: name}},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
	}
	created, err := s.createIfAbsent(ctx, res, ns, func(o runtime.Object) {
		o.(*corev1.Namespace).Status.Phase = corev1.NamespaceActive
	})
	if created {
		s.log.Info("bootstrap: created namespace", zap.String("namespace", name))
	}
	return err
}

// createIfAbsent creates obj the way a client's create does (defaults,
// preparation, validation, allocation, one transaction) unless its key
// exists. fix runs after PrepareForCreate, for fields a create may not set
// but the system may (such as status).
func (s *Server) createIfAbsent(ctx context.Context, res *registry.Resource, obj runtime.Object, fix func(runtime.Object)) (bool, error) {
	m := objectMeta(obj)
	key := res.Key(m.GetNamespace(), m.GetName())
	if _, err := s.cfg.Store.Get(ctx, key); err == nil {
		return false, nil
	} else if !errors.Is(err, datastore.ErrNotFound) {
		return false, fmt.Errorf("bootstrap: read %s: %w", key, err)
	}
	m.SetUID(uuid.NewUUID())
	m.SetCreationTimestamp(metav1.NewTime(time.Now().Truncate(time.Second)))
	res.Strategy.Default(obj)
	res.Strategy.PrepareForCreate(ctx, obj)
	if fix != nil {
		fix(obj)
	}
	if errs := res.Strategy.Validate(ctx, obj); len(errs) > 0 {
		gk := schema.GroupKind{Group: res.GroupVersion.Group, Kind: res.Kind}
		return false, fmt.Errorf("bootstrap: %w", apierrors.NewInvalid(gk, m.GetName(), errs))
	}
	ops, err := s.allocateOnCreate(ctx, res, obj)
	if err != nil {
		return false, fmt.Errorf("bootstrap: allocate for %s: %w", key, err)
	}
	data, err := encodeStored(res, obj)
	if err != nil {
		return false, err
	}
	ops = append([]datastore.Op{{Type: datastore.OpCreate, Key: key, Value: data}}, ops...)
	if _, err := s.cfg.Store.Txn(ctx, ops); err != nil {
		if errors.Is(err, datastore.ErrKeyExists) {
			if _, gerr := s.cfg.Store.Get(ctx, key); gerr == nil {
				return false, nil // created meanwhile by another writer
			}
		}
		return false, fmt.Errorf("bootstrap: create %s: %w", key, err)
	}
	return true, nil
}

// allocateOnCreate returns the reservation ops of obj: the strategy's own
// when it is an Allocator, else a reservation of a Service's ClusterIPs
// under the registry allocator's keys.
func (s *Server) allocateOnCreate(ctx context.Context, res *registry.Resource, obj runtime.Object) ([]datastore.Op, error) {
	if a, ok := res.Strategy.(registry.Allocator); ok {
		return a.AllocateOnCreate(ctx, s.cfg.Store, obj)
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, nil
	}
	var ops []datastore.Op
	for _, ip := range svc.Spec.ClusterIPs {
		ops = append(ops, datastore.Op{Type: datastore.OpCreate, Key: registry.ServiceIPsPrefix + ip,
			Value: []byte(svc.Namespace + "/" + svc.Name)})
	}
	return ops, nil
}

// findResource returns the served resource of a group and plural name.
func findResource(resources []*registry.Resource, group, resource string) *registry.Resource {
	for _, r := range resources {
		if r.GroupVersion.Group == group && r.Resource == resource {
			return r
		}
	}
	return nil
}

// firstIP returns the first usable address of a CIDR (10.43.0.0/16 -> 10.43.0.1).
func firstIP(cidr *net.IPNet) net.IP {
	ip := make(net.IP, len(cidr.IP))
	copy(ip, cidr.IP.Mask(cidr.Mask))
	for i := len(ip) - 1; i >= 0; i-- {
		ip[i]++
		if ip[i] != 0 {
			break
		}
	}
	if v4 := ip.To4(); v4 != nil {
		return v4
	}
	return ip
}

// Bootstrapped reports whether this server's local state holds what
// Bootstrap creates last (the kubernetes Service, or the system namespaces
// without a service CIDR): a server that does not lead waits for it before
// it calls itself ready.
func (s *Server) Bootstrapped(ctx context.Context) bool {
	res, ns, name := findResource(s.cfg.Resources, "", "services"), metav1.NamespaceDefault, kubernetesServiceName
	if res == nil || s.cfg.ServiceCIDR == nil {
		res, ns, name = findResource(s.cfg.Resources, "", "namespaces"), "", corev1.NamespaceNodeLease
	}
	if res == nil {
		return true
	}
	_, err := s.cfg.Store.Get(ctx, res.Key(ns, name))
	return err == nil
}
