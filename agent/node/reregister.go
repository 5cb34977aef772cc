package node

import (
	"context"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// KeepRegistered watches the agent's own Node and registers it again when
// it is deleted (kubectl delete node): same labels, taints, addresses,
// capacity and current conditions, and spec.podCIDR preset to podCIDR, the
// subnet the node's bridge and running pods use, so the server's nodeipam
// records it instead of handing out another. Should the Node come back with
// a different podCIDR anyway, that is logged as an error: the pods keep
// their addresses until the agent is restarted. It returns when ctx ends.
// The Node comes from nodes, a factory whose Nodes are this node only
// (the agent's, shared), or from a watch of its own when nodes is nil.
func KeepRegistered(ctx context.Context, log *zap.Logger, client kubernetes.Interface, nodes informers.SharedInformerFactory,
	cfg Config, podCIDR string, health func(context.Context) Health) {
	deleted := make(chan struct{}, 1)
	if nodes == nil {
		nodes = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", cfg.Name).String()
		}))
	}
	defer nodes.Shutdown()
	ctx, cancel := context.WithCancel(ctx) // ends the informers before Shutdown waits for them
	defer cancel()
	inf := nodes.Core().V1().Nodes().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(any) {
		select {
		case deleted <- struct{}{}:
		default:
		}
	}}); err != nil {
		log.Error("watching the node object", zap.Error(err))
		return
	}
	nodes.StartWithContext(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-deleted:
		}
		log.Warn("the node object was deleted; registering it again", zap.String("node", cfg.Name))
		want := Build(cfg)
		if podCIDR != "" {
			want.Spec.PodCIDR, want.Spec.PodCIDRs = podCIDR, []string{podCIDR}
		}
		want.Status.Conditions = Conditions(nil, health(ctx), metav1.Now())
		if err := registerKeepingCIDR(ctx, log, client, want); err != nil {
			return // ctx ended
		}
		got, err := WaitPodCIDR(ctx, log, client, cfg.Name)
		if err != nil {
			return
		}
		if got != podCIDR {
			log.Error("the re-registered node has another podCIDR than the pod network; pods keep their addresses until the agent restarts",
				zap.String("node", cfg.Name), zap.String("podCIDR", got), zap.String("bridgePodCIDR", podCIDR))
		}
	}
}

func nodeListWatch(client kubernetes.Interface, name string) *cache.ListWatch {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return client.CoreV1().Nodes().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return client.CoreV1().Nodes().Watch(ctx, o)
		},
	}
}

// registerKeepingCIDR registers want with its preset podCIDR; should the
// server refuse a node-set podCIDR, it registers without one and lets the
// server's nodeipam assign it.
func registerKeepingCIDR(ctx context.Context, log *zap.Logger, client kubernetes.Interface, want *corev1.Node) error {
	if want.Spec.PodCIDR != "" {
		_, err := registerOnce(ctx, client, want)
		if err == nil {
			log.Info("node registered again", zap.String("node", want.Name), zap.String("podCIDR", want.Spec.PodCIDR))
			return nil
		}
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
			log.Warn("the server refused the node's podCIDR; letting it assign one", zap.String("podCIDR", want.Spec.PodCIDR), zap.Error(err))
			want = want.DeepCopy()
			want.Spec.PodCIDR, want.Spec.PodCIDRs = "", nil
		}
	}
	_, err := Register(ctx, log, client, want)
	return err
}
