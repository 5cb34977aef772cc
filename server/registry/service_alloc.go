package registry

import (
	"context"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/datastore"
)

// serviceAllocator reserves ClusterIPs and NodePorts through allocation keys.
type serviceAllocator struct {
	ips   ipRange
	ports portRange
}

var _ Allocator = (*serviceAllocator)(nil)

func (a *serviceAllocator) AllocateOnCreate(ctx context.Context, store datastore.Store, obj runtime.Object) ([]datastore.Op, error) {
	svc := obj.(*corev1.Service)
	normalizeClusterIPs(svc)
	ops, err := a.allocateClusterIP(ctx, store, svc)
	if err != nil {
		return nil, err
	}
	portOps, err := a.allocateNodePorts(ctx, store, svc, sets.New[int32]())
	if err != nil {
		return nil, err
	}
	return append(ops, portOps...), nil
}

func (a *serviceAllocator) AllocateOnUpdate(ctx context.Context, store datastore.Store, obj, old runtime.Object) ([]datastore.Op, error) {
	svc, prev := obj.(*corev1.Service), old.(*corev1.Service)
	normalizeClusterIPs(svc)
	var ops []datastore.Op
	oldIP := allocatedIP(prev)
	switch newIP := allocatedIP(svc); {
	case oldIP == "" && needsClusterIP(svc) && (svc.Spec.ClusterIP == "" || newIP != ""):
		ipOps, err := a.allocateClusterIP(ctx, store, svc)
		if err != nil {
			return nil, err
		}
		ops = append(ops, ipOps...)
	case oldIP != "" && newIP != oldIP:
		ops = append(ops, datastore.Op{Type: datastore.OpDelete, Key: ipKey(oldIP)})
		if newIP != "" { // validation normally forbids this; keep the records right anyway
			ops = append(ops, datastore.Op{Type: datastore.OpCreate, Key: ipKey(newIP), Value: recordValue(svc)})
		}
	}
	defaultServiceIPFamilies(svc, a.ips.family)
	held := heldPorts(prev)
	portOps, err := a.allocateNodePorts(ctx, store, svc, held)
	if err != nil {
		return nil, err
	}
	ops = append(ops, portOps...)
	for _, p := range sets.List(held.Difference(heldPorts(svc))) {
		ops = append(ops, datastore.Op{Type: datastore.OpDelete, Key: portKey(p)})
	}
	return ops, nil
}

func (a *serviceAllocator) ReleaseOnDelete(obj runtime.Object) []datastore.Op {
	svc := obj.(*corev1.Service)
	var ops []datastore.Op
	if ip := allocatedIP(svc); ip != "" {
		ops = append(ops, datastore.Op{Type: datastore.OpDelete, Key: ipKey(ip)})
	}
	for _, p := range sets.List(heldPorts(svc)) {
		ops = append(ops, datastore.Op{Type: datastore.OpDelete, Key: portKey(p)})
	}
	return ops
}

// allocatedIP is the ClusterIP svc holds a record for ("" for none/headless/ExternalName).
func allocatedIP(svc *corev1.Service) string {
	if !needsClusterIP(svc) || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return ""
	}
	return svc.Spec.ClusterIP
}

func (a *serviceAllocator) allocateClusterIP(ctx context.Context, store datastore.Store, svc *corev1.Service) ([]datastore.Op, error) {
	defer defaultServiceIPFamilies(svc, a.ips.family)
	if !needsClusterIP(svc) || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		if svc.Spec.ClusterIP == corev1.ClusterIPNone {
			svc.Spec.ClusterIPs = []string{corev1.ClusterIPNone}
		}
		return nil, nil
	}
	p := field.NewPath("spec", "clusterIPs").Index(0)
	if req := svc.Spec.ClusterIP; req != "" {
		ip := net.ParseIP(req)
		if ip == nil {
			return nil, a.notInRange(svc, nil)
		}
		if ok, extra, err := a.rangeOf(ctx, store, ip); err != nil {
			return nil, err
		} else if !ok {
			return nil, a.notInRange(svc, extra)
		}
		ok, err := ipFree(ctx, store, ip.String())
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, invalidService(svc, p, req, fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", req))
		}
		svc.Spec.ClusterIP = ip.String()
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
		return []datastore.Op{{Type: datastore.OpCreate, Key: ipKey(svc.Spec.ClusterIP), Value: recordValue(svc)}}, nil
	}
	ip, ok, err := a.randomIP(ctx, store)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, rangeFull("serviceIP")
	}
	svc.Spec.ClusterIP = ip
	svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	return []datastore.Op{{Type: datastore.OpCreate, Key: ipKey(svc.Spec.ClusterIP), Value: recordValue(svc)}}, nil
}

// randomIP picks a free address of the configured range, else of the
// other ServiceCIDRs; false when every range is full.
func (a *serviceAllocator) randomIP(ctx context.Context, store datastore.Store) (string, bool, error) {
	n, err := store.Count(ctx, ServiceIPsPrefix)
	if err != nil {
		return "", false, fmt.Errorf("counting service IPs: %w", err)
	}
	if n < a.ips.size {
		// Offset 0 (the first address) is kept for the "kubernetes" Service.
		skip := func(off int64) bool { return off == 0 }
		off, ok, err := probe(ctx, a.ips.size, skip, func(off int64) (bool, error) {
			return ipFree(ctx, store, a.ips.at(off).String())
		})
		if err != nil || ok {
			return a.ips.at(off).String(), ok, err
		}
	}
	return a.randomFromExtra(ctx, store)
}

// allocateNodePorts reserves the node ports of svc not in held (values the
// service already owns), choosing free ports for unset ones when the type needs them.
func (a *serviceAllocator) allocateNodePorts(ctx context.Context, store datastore.Store, svc *corev1.Service, held sets.Set[int32]) ([]datastore.Op, error) {
	if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return nil, nil
	}
	var ops []datastore.Op
	taken := held.Clone()
	reserve := func(np *int32, path *field.Path, auto bool) error {
		switch {
		case *np == 0 && !auto:
			return nil
		case *np == 0:
			p, err := a.randomPort(ctx, store, taken)
			if err != nil {
				return err
			}
			*np = p
		case taken.Has(*np):
			return nil
		default:
			if err := a.checkRequestedPort(ctx, store, svc, *np, path); err != nil {
				return err
			}
		}
		taken.Insert(*np)
		ops = append(ops, datastore.Op{Type: datastore.OpCreate, Key: portKey(*np), Value: recordValue(svc)})
		return nil
	}
	// Requested ports first, so random picks avoid them.
	for _, requested := range []bool{true, false} {
		for i := range svc.Spec.Ports {
			if (svc.Spec.Ports[i].NodePort != 0) != requested {
				continue
			}
			path := field.NewPath("spec", "ports").Index(i).Child("nodePort")
			if err := reserve(&svc.Spec.Ports[i].NodePort, path, needsNodePort(svc)); err != nil {
				return nil, err
			}
		}
	}
	if needsHealthCheckNodePort(svc) {
		if err := reserve(&svc.Spec.HealthCheckNodePort, field.NewPath("spec", "healthCheckNodePort"), true); err != nil {
			return nil, err
		}
	}
	return ops, nil
}

func (a *serviceAllocator) checkRequestedPort(ctx context.Context, store datastore.Store, svc *corev1.Service, np int32, path *field.Path) error {
	if np < int32(a.ports.base) || np >= int32(a.ports.base+a.ports.size) {
		return invalidService(svc, path, np, fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %d-%d", a.ports.base, a.ports.base+a.ports.size-1))
	}
	if ok, err := keyFree(ctx, store, portKey(np)); err != nil {
		return err
	} else if !ok {
		return invalidService(svc, path, np, "provided port is already allocated")
	}
	return nil
}

// heldPorts are the node ports (and health-check node port) svc holds records for.
func heldPorts(svc *corev1.Service) sets.Set[int32] {
	if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return sets.New[int32]()
	}
	out := nodePortSet(svc)
	if needsHealthCheckNodePort(svc) && svc.Spec.HealthCheckNodePort != 0 {
		out.Insert(svc.Spec.HealthCheckNodePort)
	}
	return out
}

func (a *serviceAllocator) randomPort(ctx context.Context, store datastore.Store, taken sets.Set[int32]) (int32, error) {
	size := int64(a.ports.size)
	if n, err := store.Count(ctx, ServiceNodePortsPrefix); err != nil {
		return 0, fmt.Errorf("counting node ports: %w", err)
	} else if n >= size {
		return 0, rangeFull("nodePort")
	}
	port := func(off int64) int32 { return int32(a.ports.base) + int32(off) }
	off, ok, err := probe(ctx, size, func(off int64) bool { return taken.Has(port(off)) },
		func(off int64) (bool, error) { return keyFree(ctx, store, portKey(port(off))) })
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, rangeFull("nodePort")
	}
	return port(off), nil
}
