package servicelb

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sort"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// Controller keeps status.loadBalancer of LoadBalancer Services.
type Controller struct {
	client   kubernetes.Interface
	services corelisters.ServiceLister
	nodes    corelisters.NodeLister
	synced   []cache.InformerSynced
	queue    kit.Queue
	log      *zap.Logger
}

// New registers the Service and Node informer handlers on kc.
func New(kc *kit.Context) (*Controller, error) {
	svcs, nodes := kc.Informers.Core().V1().Services(), kc.Informers.Core().V1().Nodes()
	c := &Controller{client: kc.Client, services: svcs.Lister(), nodes: nodes.Lister(),
		synced: []cache.InformerSynced{svcs.Informer().HasSynced, nodes.Informer().HasSynced},
		queue:  kc.NewQueue("servicelb"), log: kc.Logger.Named("servicelb")}
	onSvc := func(obj any) {
		if s, ok := obj.(*corev1.Service); ok && (handled(s) || len(s.Status.LoadBalancer.Ingress) > 0) {
			kit.Enqueue(c.queue, s)
		}
	}
	if _, err := svcs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onSvc, UpdateFunc: func(_, obj any) { onSvc(obj) },
	}); err != nil {
		return nil, err
	}
	onNode := func(any) { c.enqueueAll() }
	_, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onNode, DeleteFunc: onNode,
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.Node)
			n, ok2 := cur.(*corev1.Node)
			if !ok1 || !ok2 || !slices.Equal(nodeAddrs([]*corev1.Node{o}), nodeAddrs([]*corev1.Node{n})) {
				c.enqueueAll()
			}
		},
	})
	return c, err
}

// handled says whether the controller owns the Service's status.
func handled(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.LoadBalancerClass == nil
}

func (c *Controller) enqueueAll() {
	svcs, err := c.services.List(labels.Everything())
	if err != nil {
		return
	}
	for _, s := range svcs {
		if handled(s) {
			kit.Enqueue(c.queue, s)
		}
	}
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	c.log.Info("service load balancer running")
	kit.RunWorkers(ctx, c.queue, 1, c.sync, c.log)
	return nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	s, err := c.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	var want []corev1.LoadBalancerIngress
	if handled(s) {
		nodes, err := c.nodes.List(labels.Everything())
		if err != nil {
			return err
		}
		for _, ip := range nodeAddrs(nodes) {
			want = append(want, corev1.LoadBalancerIngress{IP: ip})
		}
	} else if s.Spec.Type == corev1.ServiceTypeLoadBalancer {
		return nil // another load balancer's
	}
	if slices.EqualFunc(s.Status.LoadBalancer.Ingress, want, func(a, b corev1.LoadBalancerIngress) bool { return a.IP == b.IP && a.Hostname == b.Hostname }) {
		return nil
	}
	upd := s.DeepCopy()
	upd.Status.LoadBalancer.Ingress = want
	if _, err := c.client.CoreV1().Services(ns).UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the load balancer status of %s: %w", key, err)
	}
	c.log.Debug("load balancer status", zap.String("service", key), zap.Int("ingress", len(want)))
	return nil
}

// nodeAddrs are the IPv4 addresses of the Ready nodes (ExternalIP, else
// InternalIP), sorted.
func nodeAddrs(nodes []*corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		if !ready(n) || n.DeletionTimestamp != nil {
			continue
		}
		if ip := nodeAddr(n, corev1.NodeExternalIP); ip != "" {
			out = append(out, ip)
		} else if ip := nodeAddr(n, corev1.NodeInternalIP); ip != "" {
			out = append(out, ip)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func nodeAddr(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if ip := net.ParseIP(a.Address); a.Type == t && ip != nil && ip.To4() != nil {
			return ip.String()
		}
	}
	return ""
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
