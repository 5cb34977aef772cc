package servicecidr

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"slices"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	netlisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// byClusterIP indexes Services by their allocated ClusterIPs.
const byClusterIP = "clusterIP"

// IPAddresses keeps an IPAddress for every allocated ClusterIP.
type IPAddresses struct {
	kc       *kit.Context
	log      *zap.Logger
	q        kit.Queue
	services cache.Indexer
	ips      netlisters.IPAddressLister
	synced   []cache.InformerSynced
}

// NewIPAddresses registers the controller's informers. Its queue holds
// addresses.
func NewIPAddresses(kc *kit.Context) (*IPAddresses, error) {
	si, ii := kc.Informers.Core().V1().Services(), kc.Informers.Networking().V1().IPAddresses()
	if err := si.Informer().AddIndexers(cache.Indexers{byClusterIP: func(o any) ([]string, error) {
		return clusterIPs(o.(*corev1.Service)), nil
	}}); err != nil {
		return nil, fmt.Errorf("service index: %w", err)
	}
	c := &IPAddresses{kc: kc, log: kc.Logger.Named("ipaddresses"), q: kc.NewQueue("ipaddresses"),
		services: si.Informer().GetIndexer(), ips: ii.Lister(),
		synced: []cache.InformerSynced{si.Informer().HasSynced, ii.Informer().HasSynced}}
	svcIPs := func(o any) {
		if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		if svc, ok := o.(*corev1.Service); ok {
			for _, ip := range clusterIPs(svc) {
				c.q.Add(ip)
			}
		}
	}
	if _, err := si.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: svcIPs, UpdateFunc: func(old, o any) { svcIPs(old); svcIPs(o) }, DeleteFunc: svcIPs,
	}); err != nil {
		return nil, fmt.Errorf("service handler: %w", err)
	}
	if _, err := ii.Informer().AddEventHandler(kit.EnqueueHandler(c.q)); err != nil {
		return nil, fmt.Errorf("ipaddress handler: %w", err)
	}
	return c, nil
}

// clusterIPs are the addresses a Service holds ("None" is none).
func clusterIPs(svc *corev1.Service) []string {
	var out []string
	for _, ip := range svc.Spec.ClusterIPs {
		if a, err := netip.ParseAddr(ip); err == nil {
			out = append(out, a.String())
		}
	}
	return out
}

// Run works the queue until ctx ends.
func (c *IPAddresses) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return nil
	}
	kit.RunWorkers(ctx, c.q, 2, c.sync, c.log)
	return nil
}

func (c *IPAddresses) sync(ctx context.Context, ip string) error {
	holder, err := c.holder(ip)
	if err != nil {
		return err
	}
	cur, err := c.ips.Get(ip)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	managed := cur != nil && cur.Labels[networkingv1.LabelManagedBy] == ManagedBy
	switch {
	case holder == nil && managed:
		return c.delete(ctx, cur)
	case holder == nil:
		return nil
	case cur == nil:
		return c.create(ctx, ip, holder)
	case sameParent(cur.Spec.ParentRef, holder):
		return nil
	case managed:
		// Left over from a Service that held the address before: replace it.
		return c.delete(ctx, cur)
	}
	c.log.Warn("IPAddress of a Service ClusterIP belongs to something else", zap.String("ip", ip),
		zap.String("service", holder.Namespace+"/"+holder.Name))
	return nil
}

// holder is the Service holding ip (the first by namespace/name if the
// index shows several), nil for none.
func (c *IPAddresses) holder(ip string) (*corev1.Service, error) {
	objs, err := c.services.ByIndex(byClusterIP, ip)
	if err != nil {
		return nil, err
	}
	var svcs []*corev1.Service
	for _, o := range objs {
		svcs = append(svcs, o.(*corev1.Service))
	}
	if len(svcs) == 0 {
		return nil, nil
	}
	slices.SortFunc(svcs, func(a, b *corev1.Service) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return svcs[0], nil
}

func sameParent(r *networkingv1.ParentReference, svc *corev1.Service) bool {
	return r != nil && r.Group == "" && r.Resource == "services" && r.Namespace == svc.Namespace && r.Name == svc.Name
}

func (c *IPAddresses) create(ctx context.Context, ip string, svc *corev1.Service) error {
	family := corev1.IPv4Protocol
	if a, err := netip.ParseAddr(ip); err == nil && a.Is6() {
		family = corev1.IPv6Protocol
	}
	obj := &networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: ip, Labels: map[string]string{
			networkingv1.LabelIPAddressFamily: string(family), networkingv1.LabelManagedBy: ManagedBy}},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: svc.Namespace, Name: svc.Name}},
	}
	_, err := c.kc.Client.NetworkingV1().IPAddresses().Create(ctx, obj, metav1.CreateOptions{FieldManager: ManagedBy})
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("IPAddress %s appeared meanwhile: %w", ip, err) // retried with the new one in the cache
	}
	return err
}

func (c *IPAddresses) delete(ctx context.Context, ip *networkingv1.IPAddress) error {
	err := c.kc.Client.NetworkingV1().IPAddresses().Delete(ctx, ip.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &ip.UID}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
