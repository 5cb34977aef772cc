package localpath

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Config configures Run.
type Config struct {
	Client     kubernetes.Interface
	NodeName   string
	StorageDir string // absolute; StorageDir(agent data dir)
	Logger     *zap.Logger
	// NodeInformers, when set, is a factory whose Nodes are this node only
	// (the agent's, shared with the node's re-registration); else the
	// cleaner watches its Node itself.
	NodeInformers informers.SharedInformerFactory
}

// cleaner removes the data of deleted local-path volumes of one node.
type cleaner struct {
	cfg   Config
	log   *zap.Logger
	pvs   corelisters.PersistentVolumeLister
	queue workqueue.TypedRateLimitingInterface[string]
}

// Run creates the storage dir, reports it on the Node and removes the data
// of this node's deleted local-path volumes until ctx ends. It watches only
// the PVs labelled with the node.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	log := cfg.Logger.Named("localpath")
	if err := os.MkdirAll(cfg.StorageDir, 0o700); err != nil {
		return fmt.Errorf("local-path storage dir: %w", err)
	}
	if err := os.Chmod(cfg.StorageDir, 0o700); err != nil { // containers reach volumes through bind mounts only
		return fmt.Errorf("local-path storage dir: %w", err)
	}
	if err := publishDir(ctx, cfg, log); err != nil {
		return err
	}
	c, factories, err := newCleaner(cfg, log)
	if err != nil {
		return err
	}
	defer c.queue.ShutDown()
	for _, f := range factories {
		f.StartWithContext(ctx)
		defer f.Shutdown()
	}
	for _, f := range factories {
		for _, synced := range f.WaitForCacheSync(ctx.Done()) {
			if !synced {
				return ctx.Err()
			}
		}
	}
	go func() { <-ctx.Done(); c.queue.ShutDown() }()
	for c.next(ctx) {
	}
	return ctx.Err()
}

// nodeKey is the queue key of the own Node (PV names have no colon).
const nodeKey = "node:"

// newCleaner watches the PVs labelled with the node and the Node itself
// (re-registered Nodes lose the annotation).
func newCleaner(cfg Config, log *zap.Logger) (*cleaner, []informers.SharedInformerFactory, error) {
	factory := informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.Set{NodeLabel: cfg.NodeName}.String()
		}))
	inf := factory.Core().V1().PersistentVolumes()
	c := &cleaner{cfg: cfg, log: log, pvs: inf.Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "localpath"})}
	enqueue := func(obj any) {
		if k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(k)
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }}); err != nil {
		return nil, nil, fmt.Errorf("local-path: %w", err)
	}
	nodeFactory := cfg.NodeInformers
	if nodeFactory == nil {
		nodeFactory = informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", cfg.NodeName).String()
		}))
	}
	nodes := nodeFactory.Core().V1().Nodes()
	checkNode := func(obj any) {
		if n, ok := obj.(*corev1.Node); ok && n.Annotations[NodeDirAnnotation] != cfg.StorageDir {
			c.queue.Add(nodeKey)
		}
	}
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: checkNode, UpdateFunc: func(_, obj any) { checkNode(obj) }}); err != nil {
		return nil, nil, fmt.Errorf("local-path: %w", err)
	}
	return c, []informers.SharedInformerFactory{factory, nodeFactory}, nil
}

// publishDir sets the Node annotation naming the storage dir, retrying
// while the API is unreachable.
func publishDir(ctx context.Context, cfg Config, log *zap.Logger) error {
	delay := 200 * time.Millisecond
	for {
		err := patchDir(ctx, cfg)
		if err == nil {
			log.Info("local-path storage ready", zap.String("dir", cfg.StorageDir))
			return nil
		}
		log.Warn("reporting the local-path storage dir; retrying", zap.Duration("in", delay), zap.Error(err))
		select {
		case <-ctx.Done():
			return fmt.Errorf("reporting the local-path storage dir: %w", err)
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}

func (c *cleaner) next(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)
	if err := c.sync(ctx, name); err != nil {
		if ctx.Err() == nil {
			c.log.Warn("cleaning up a local-path volume; retrying", zap.String("volume", name), zap.Error(err))
		}
		c.queue.AddRateLimited(name)
		return true
	}
	c.queue.Forget(name)
	return true
}

// sync removes a deleted volume's data (policy Delete only) and then its
// finalizer.
func (c *cleaner) sync(ctx context.Context, name string) error {
	if name == nodeKey {
		return patchDir(ctx, c.cfg)
	}
	pv, err := c.pvs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pv.DeletionTimestamp == nil || !slices.Contains(pv.Finalizers, Finalizer) || pv.Labels[NodeLabel] != c.cfg.NodeName {
		return nil
	}
	if err := c.removeData(pv); err != nil {
		return err
	}
	pv = pv.DeepCopy()
	pv.Finalizers = slices.DeleteFunc(pv.Finalizers, func(f string) bool { return f == Finalizer })
	if _, err := c.cfg.Client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizer of volume %s: %w", name, err)
	}
	return nil
}

// errOutside: a PV's path is not one of this node's local-path dirs.
var errOutside = errors.New("path is outside the local-path storage dir")

func (c *cleaner) removeData(pv *corev1.PersistentVolume) error {
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		c.log.Info("volume deleted; data retained (reclaim policy)", zap.String("volume", pv.Name),
			zap.String("policy", string(pv.Spec.PersistentVolumeReclaimPolicy)))
		return nil
	}
	path := ""
	if pv.Spec.HostPath != nil {
		path = pv.Spec.HostPath.Path
	}
	if !IsVolumePath(c.cfg.StorageDir, path) {
		c.log.Warn("not removing data", zap.String("volume", pv.Name), zap.String("path", path),
			zap.String("storageDir", c.cfg.StorageDir), zap.Error(errOutside))
		return nil
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("removing data of volume %s: %w", pv.Name, err)
	}
	c.log.Info("volume data removed", zap.String("volume", pv.Name), zap.String("path", path))
	return nil
}

// patchDir sets the Node annotation naming the storage dir.
func patchDir(ctx context.Context, cfg Config) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{NodeDirAnnotation: cfg.StorageDir}}})
	if err != nil {
		return err
	}
	if _, err := cfg.Client.CoreV1().Nodes().Patch(ctx, cfg.NodeName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("annotating node %s: %w", cfg.NodeName, err)
	}
	return nil
}
