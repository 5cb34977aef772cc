package tokencleaner

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/internal/bootstraptoken"
	"github.com/orch/orch/server/controllers/kit"
)

// Controller deletes expired bootstrap token Secrets.
type Controller struct {
	kc      *kit.Context
	log     *zap.Logger
	q       kit.Queue
	secrets corelisters.SecretLister
	synced  cache.InformerSynced
	now     func() time.Time
}

// New registers the controller's handler on an informer of kube-system's
// bootstrap token Secrets only (upstream's token cleaner watches the same
// selection), not every Secret of the cluster.
func New(kc *kit.Context) (*Controller, error) {
	inf := kc.FilteredInformers(bootstraptoken.Namespace, "type="+bootstraptoken.SecretType).Core().V1().Secrets()
	c := &Controller{kc: kc, log: kc.Logger.Named("tokencleaner"), q: kc.NewQueue("tokencleaner"),
		secrets: inf.Lister(), synced: inf.Informer().HasSynced, now: time.Now}
	_, err := inf.Informer().AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			s, ok := obj.(*corev1.Secret)
			return ok && bootstraptoken.IsTokenSecret(s)
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { kit.Enqueue(c.q, obj) },
			UpdateFunc: func(_, obj any) { kit.Enqueue(c.q, obj) },
		},
	})
	if err != nil {
		return nil, fmt.Errorf("bootstrap token handler: %w", err)
	}
	return c, nil
}

// Run cleans until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced) {
		return nil
	}
	kit.RunWorkers(ctx, c.q, 1, c.sync, c.log)
	return nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	s, err := c.secrets.Secrets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get secret %s: %w", key, err)
	}
	if !bootstraptoken.IsTokenSecret(s) || s.DeletionTimestamp != nil {
		return nil
	}
	left, expired := bootstraptoken.Expiration(s, c.now())
	if !expired {
		if left > 0 {
			kit.Requeue(c.q, key, left)
		}
		return nil
	}
	uid := s.UID
	err = c.kc.Client.CoreV1().Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete expired bootstrap token %s: %w", key, err)
	}
	c.log.Info("deleted an expired bootstrap token", zap.String("secret", key))
	return nil
}
