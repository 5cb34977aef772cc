package ingress

import (
	"context"
	"fmt"
	"slices"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"

	agentingress "github.com/orch/orch/agent/ingress"
	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/servicelb"
)

// Controller keeps the IngressClass and the status of its Ingresses.
type Controller struct {
	client    kubernetes.Interface
	ingresses networkinglisters.IngressLister
	classes   networkinglisters.IngressClassLister
	nodes     corelisters.NodeLister
	synced    []cache.InformerSynced
	queue     kit.Queue
	log       *zap.Logger
}

// New registers the Ingress, IngressClass and Node handlers on kc.
func New(kc *kit.Context) (*Controller, error) {
	ings, cls := kc.Informers.Networking().V1().Ingresses(), kc.Informers.Networking().V1().IngressClasses()
	nodes := kc.Informers.Core().V1().Nodes()
	c := &Controller{client: kc.Client, ingresses: ings.Lister(), classes: cls.Lister(), nodes: nodes.Lister(),
		synced: []cache.InformerSynced{ings.Informer().HasSynced, cls.Informer().HasSynced, nodes.Informer().HasSynced},
		queue:  kc.NewQueue("ingress"), log: kc.Logger.Named("ingress")}
	if _, err := ings.Informer().AddEventHandler(kit.EnqueueHandler(c.queue)); err != nil {
		return nil, err
	}
	all := func(any) { c.enqueueAll() }
	if _, err := cls.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: all,
		UpdateFunc: func(_, o any) { all(o) }, DeleteFunc: all}); err != nil {
		return nil, err
	}
	_, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: all, DeleteFunc: all,
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.Node)
			n, ok2 := cur.(*corev1.Node)
			if !ok1 || !ok2 || !slices.Equal(servicelb.NodeAddresses([]*corev1.Node{o}), servicelb.NodeAddresses([]*corev1.Node{n})) {
				c.enqueueAll()
			}
		},
	})
	return c, err
}

func (c *Controller) enqueueAll() {
	ings, err := c.ingresses.List(labels.Everything())
	if err != nil {
		return
	}
	for _, ing := range ings {
		kit.Enqueue(c.queue, ing)
	}
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	c.log.Info("ingress status controller running")
	kit.RunWorkers(ctx, c.queue, 1, c.sync, c.log)
	return nil
}

// Class is the IngressClass orch creates.
func Class() *networkingv1.IngressClass {
	return &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: agentingress.ClassName,
			Annotations: map[string]string{agentingress.DefaultClassAnnotation: "true"},
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "orch"}},
		Spec: networkingv1.IngressClassSpec{Controller: agentingress.ControllerName},
	}
}

// EnsureClass creates the IngressClass unless it exists (a user may have
// changed it, e.g. removed the default-class annotation: kept as is).
func EnsureClass(ctx context.Context, client kubernetes.Interface) error {
	_, err := client.NetworkingV1().IngressClasses().Create(ctx, Class(), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// RemoveClass deletes the IngressClass orch when orch's controller owns
// it (--disable ingress), so the agents stop listening.
func RemoveClass(ctx context.Context, client kubernetes.Interface) error {
	ic, err := client.NetworkingV1().IngressClasses().Get(ctx, agentingress.ClassName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && ic.Spec.Controller != agentingress.ControllerName) {
		return nil
	}
	if err == nil {
		err = client.NetworkingV1().IngressClasses().Delete(ctx, ic.Name, metav1.DeleteOptions{})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the IngressClass %s: %w", agentingress.ClassName, err)
	}
	return nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	ing, err := c.ingresses.Ingresses(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	ic, err := c.classes.Get(agentingress.ClassName)
	if err != nil || ic.Spec.Controller != agentingress.ControllerName ||
		!agentingress.Served(ing, ic.Annotations[agentingress.DefaultClassAnnotation] == "true") {
		return nil // not ours (another controller writes its status)
	}
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return err
	}
	var want []networkingv1.IngressLoadBalancerIngress
	for _, ip := range servicelb.NodeAddresses(nodes) {
		want = append(want, networkingv1.IngressLoadBalancerIngress{IP: ip})
	}
	if slices.EqualFunc(ing.Status.LoadBalancer.Ingress, want, func(a, b networkingv1.IngressLoadBalancerIngress) bool {
		return a.IP == b.IP && a.Hostname == "" && len(a.Ports) == 0
	}) {
		return nil
	}
	upd := ing.DeepCopy()
	upd.Status.LoadBalancer.Ingress = want
	if _, err := c.client.NetworkingV1().Ingresses(ns).UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the status of Ingress %s: %w", key, err)
	}
	c.log.Debug("ingress status", zap.String("ingress", key), zap.Int("addresses", len(want)))
	return nil
}
