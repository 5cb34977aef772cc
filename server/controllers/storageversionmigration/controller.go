package storageversionmigration

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	svmlisters "k8s.io/client-go/listers/storagemigration/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// ControllerName is upstream's, the field manager of the rewrites.
const ControllerName = "storage-version-migrator-controller"

// Upstream's reasons.
const (
	reasonRunning   = "MigrationRunning"
	reasonSucceeded = "StorageVersionMigrationSucceeded"
	reasonFailed    = "StorageVersionMigrationFailed"
	reasonCompleted = "MigrationCompleted"
)

// discoveryGrace is how long a resource missing from discovery is waited
// for (a CRD just created) before the migration fails.
const discoveryGrace = time.Minute

// Controller runs StorageVersionMigrations.
type Controller struct {
	kc     *kit.Context
	log    *zap.Logger
	q      kit.Queue
	svms   svmlisters.StorageVersionMigrationLister
	synced cache.InformerSynced
	now    func() time.Time
}

// New registers the controller's informer.
func New(kc *kit.Context) (*Controller, error) {
	inf := kc.Informers.Storagemigration().V1().StorageVersionMigrations()
	c := &Controller{kc: kc, log: kc.Logger.Named("storage-version-migrator"), q: kc.NewQueue("storage-version-migrator"),
		svms: inf.Lister(), synced: inf.Informer().HasSynced, now: time.Now}
	// A migration that ends lets the next one of its resource start: any
	// change queues every migration of the same resource.
	sameResource := func(o any) {
		if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		if s, ok := o.(*svmv1.StorageVersionMigration); ok {
			c.enqueueResource(s.Spec.Resource)
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: sameResource, UpdateFunc: func(_, o any) { sameResource(o) }, DeleteFunc: sameResource,
	}); err != nil {
		return nil, fmt.Errorf("storageversionmigration handler: %w", err)
	}
	return c, nil
}

func (c *Controller) enqueueResource(gr metav1.GroupResource) {
	all, err := c.svms.List(labels.Everything())
	if err != nil {
		return
	}
	for _, s := range all {
		if s.Spec.Resource == gr {
			c.q.Add(s.Name)
		}
	}
}

// Run works the queue until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced) {
		return nil
	}
	kit.RunWorkers(ctx, c.q, 2, c.sync, c.log)
	return nil
}

func (c *Controller) sync(ctx context.Context, name string) error {
	cur, err := c.svms.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	svm := cur.DeepCopy()
	switch {
	case terminal(svm):
		return c.complete(ctx, svm)
	case !isTrue(svm, svmv1.MigrationRunning):
		return c.maybeStart(ctx, svm)
	case svm.Status.ResourceVersion == "":
		return c.recordRV(ctx, svm)
	}
	return c.migrate(ctx, svm)
}

// maybeStart marks svm Running when it is the oldest pending migration of
// its resource and none of them runs.
func (c *Controller) maybeStart(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	all, err := c.svms.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, o := range all {
		if o.Spec.Resource != svm.Spec.Resource || o.Name == svm.Name {
			continue
		}
		if isTrue(o, svmv1.MigrationRunning) && !terminal(o) {
			return nil // one at a time
		}
		if !isTrue(o, svmv1.MigrationRunning) && !terminal(o) && older(o, svm) {
			return nil // the older one goes first
		}
	}
	if err := c.setCRDMigrating(ctx, svm.Spec.Resource, svm.Name); err != nil {
		return err
	}
	setCondition(svm, svmv1.MigrationRunning, metav1.ConditionTrue, reasonRunning, "The migration is running")
	return c.updateStatus(ctx, svm)
}

func older(a, b *svmv1.StorageVersionMigration) bool {
	return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name)) < 0
}

// recordRV records where the migration stops: the resourceVersion of the
// resource's collection now.
func (c *Controller) recordRV(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	t, err := c.resolve(svm.Spec.Resource)
	if err != nil {
		return err
	}
	if t == nil {
		if wait := discoveryGrace - c.now().Sub(svm.CreationTimestamp.Time); wait > 0 {
			kit.Requeue(c.q, svm.Name, min(wait, 10*time.Second))
			return nil
		}
		return c.fail(ctx, svm, "resource does not exist in discovery")
	}
	if !t.migratable {
		return c.fail(ctx, svm, fmt.Sprintf("resource %q does not support discovery operations: [update patch list]", t.gvr.String()))
	}
	rv, err := c.currentRV(ctx, t.gvr)
	if err != nil {
		return err
	}
	svm.Status.ResourceVersion = rv
	return c.updateStatus(ctx, svm)
}

// complete turns Running off once the migration ended, and finishes a
// CRD's migration.
func (c *Controller) complete(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	if !isTrue(svm, svmv1.MigrationRunning) {
		return nil
	}
	if err := c.finishCRD(ctx, svm.Spec.Resource, isTrue(svm, svmv1.MigrationSucceeded)); err != nil {
		return err
	}
	setCondition(svm, svmv1.MigrationRunning, metav1.ConditionFalse, reasonCompleted, "Migration completed")
	return c.updateStatus(ctx, svm)
}

func (c *Controller) fail(ctx context.Context, svm *svmv1.StorageVersionMigration, msg string) error {
	c.log.Info("migration failed", zap.String("migration", svm.Name), zap.String("resource", svm.Spec.Resource.String()), zap.String("error", msg))
	setCondition(svm, svmv1.MigrationFailed, metav1.ConditionTrue, reasonFailed, "migration encountered unhandled error: "+msg)
	return c.updateStatus(ctx, svm)
}

func (c *Controller) updateStatus(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	_, err := c.kc.Client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, svm, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func isTrue(svm *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType) bool {
	return meta.IsStatusConditionTrue(svm.Status.Conditions, string(t))
}

func terminal(svm *svmv1.StorageVersionMigration) bool {
	return isTrue(svm, svmv1.MigrationSucceeded) || isTrue(svm, svmv1.MigrationFailed)
}

func setCondition(svm *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType, s metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&svm.Status.Conditions, metav1.Condition{Type: string(t), Status: s, Reason: reason, Message: msg,
		ObservedGeneration: svm.Generation, LastTransitionTime: metav1.Now()})
}
