package servicecidr

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"go.uber.org/zap"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	netapply "k8s.io/client-go/applyconfigurations/networking/v1"
	netlisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// Names upstream uses.
const (
	Finalizer      = "networking.k8s.io/service-cidr-finalizer"
	controllerName = "service-cidr-controller"
	// ManagedBy is the ipaddress.kubernetes.io/managed-by value of the
	// IPAddresses of Service ClusterIPs.
	ManagedBy = "ipallocator.k8s.io"
	// deletionGrace is how long a deleted ServiceCIDR that holds no
	// address keeps its finalizer.
	deletionGrace = 10 * time.Second
)

// Controller keeps the ServiceCIDRs' finalizer and Ready condition.
type Controller struct {
	kc     *kit.Context
	log    *zap.Logger
	q      kit.Queue
	cidrs  netlisters.ServiceCIDRLister
	ips    netlisters.IPAddressLister
	synced []cache.InformerSynced
}

// New registers the controller's informers.
func New(kc *kit.Context) (*Controller, error) {
	ci, ii := kc.Informers.Networking().V1().ServiceCIDRs(), kc.Informers.Networking().V1().IPAddresses()
	c := &Controller{kc: kc, log: kc.Logger.Named("servicecidr"), q: kc.NewQueue("servicecidr"),
		cidrs: ci.Lister(), ips: ii.Lister(), synced: []cache.InformerSynced{ci.Informer().HasSynced, ii.Informer().HasSynced}}
	if _, err := ci.Informer().AddEventHandler(kit.EnqueueHandler(c.q)); err != nil {
		return nil, fmt.Errorf("servicecidr handler: %w", err)
	}
	// A released address may unblock a terminating ServiceCIDR.
	if _, err := ii.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(any) { c.enqueueTerminating() }}); err != nil {
		return nil, fmt.Errorf("ipaddress handler: %w", err)
	}
	return c, nil
}

func (c *Controller) enqueueTerminating() {
	all, err := c.cidrs.List(labels.Everything())
	if err != nil {
		return
	}
	for _, sc := range all {
		if sc.DeletionTimestamp != nil {
			c.q.Add(sc.Name)
		}
	}
}

// Run works the queue until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return nil
	}
	kit.RunWorkers(ctx, c.q, 1, c.sync, c.log)
	return nil
}

func (c *Controller) sync(ctx context.Context, name string) error {
	sc, err := c.cidrs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if sc.DeletionTimestamp != nil {
		return c.syncDeleting(ctx, sc)
	}
	if !hasFinalizer(sc) {
		if err := c.patchFinalizer(ctx, sc.Name, `{"metadata":{"finalizers":["`+Finalizer+`"]}}`); err != nil {
			return err
		}
	}
	return c.setReady(ctx, sc, metav1.ConditionTrue, "", "Kubernetes Service CIDR is ready")
}

// syncDeleting lets a deleted ServiceCIDR go once no managed IPAddress
// lies only in it.
func (c *Controller) syncDeleting(ctx context.Context, sc *networkingv1.ServiceCIDR) error {
	if !hasFinalizer(sc) {
		return nil
	}
	blocked, err := c.orphans(sc)
	if err != nil {
		return err
	}
	if blocked != "" {
		c.log.Info("ServiceCIDR deletion blocked by an allocated IP", zap.String("serviceCIDR", sc.Name), zap.String("ip", blocked))
		return c.setReady(ctx, sc, metav1.ConditionFalse, networkingv1.ServiceCIDRReasonTerminating,
			"There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR")
	}
	// An allocation that read the ServiceCIDR before its deletion may still
	// be on its way: wait a little before letting it go (as upstream).
	if wait := deletionGrace - time.Since(sc.DeletionTimestamp.Time); wait > 0 {
		kit.Requeue(c.q, sc.Name, wait)
		return nil
	}
	return c.patchFinalizer(ctx, sc.Name, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["`+Finalizer+`"]}}`)
}

// orphans returns an allocated address that no other ServiceCIDR contains.
func (c *Controller) orphans(sc *networkingv1.ServiceCIDR) (string, error) {
	all, err := c.cidrs.List(labels.Everything())
	if err != nil {
		return "", err
	}
	ips, err := c.ips.List(labels.SelectorFromSet(labels.Set{networkingv1.LabelManagedBy: ManagedBy}))
	if err != nil {
		return "", err
	}
	for _, ip := range ips {
		addr, err := netip.ParseAddr(ip.Name)
		if err != nil || !contains(sc, addr) {
			continue
		}
		elsewhere := false
		for _, other := range all {
			if other.Name != sc.Name && other.DeletionTimestamp == nil && contains(other, addr) {
				elsewhere = true
				break
			}
		}
		if !elsewhere {
			return ip.Name, nil
		}
	}
	return "", nil
}

func contains(sc *networkingv1.ServiceCIDR, addr netip.Addr) bool {
	for _, cidr := range sc.Spec.CIDRs {
		if p, err := netip.ParsePrefix(cidr); err == nil && p.Contains(addr) {
			return true
		}
	}
	return false
}

func hasFinalizer(sc *networkingv1.ServiceCIDR) bool {
	for _, f := range sc.Finalizers {
		if f == Finalizer {
			return true
		}
	}
	return false
}

func (c *Controller) patchFinalizer(ctx context.Context, name, patch string) error {
	_, err := c.kc.Client.NetworkingV1().ServiceCIDRs().Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// setReady applies the Ready condition unless it already says so.
func (c *Controller) setReady(ctx context.Context, sc *networkingv1.ServiceCIDR, status metav1.ConditionStatus, reason, msg string) error {
	if cur := meta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady); cur != nil &&
		cur.Status == status && cur.Reason == reason && cur.Message == msg {
		return nil
	}
	cond := metav1apply.Condition().WithType(networkingv1.ServiceCIDRConditionReady).WithStatus(status).
		WithReason(reason).WithMessage(msg).WithLastTransitionTime(metav1.Now())
	apply := netapply.ServiceCIDR(sc.Name).WithStatus(netapply.ServiceCIDRStatus().WithConditions(cond))
	_, err := c.kc.Client.NetworkingV1().ServiceCIDRs().ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: controllerName, Force: true})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
