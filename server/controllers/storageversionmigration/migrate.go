package storageversionmigration

import (
	"context"
	"errors"
	"fmt"

	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// permanentError ends a migration as Failed.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// migrate writes back every object not changed since the recorded
// resourceVersion, then marks the migration Succeeded.
func (c *Controller) migrate(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	t, err := c.resolve(svm.Spec.Resource)
	if err != nil {
		return err
	}
	if t == nil {
		return c.fail(ctx, svm, "resource does not exist in discovery")
	}
	total, migrated := 0, 0
	err = c.forEach(ctx, t.gvr, func(m metav1.PartialObjectMetadata) error {
		total++
		cmp, err := resourceversion.CompareResourceVersion(m.ResourceVersion, svm.Status.ResourceVersion)
		if err != nil {
			return &permanentError{fmt.Errorf("comparing the resourceVersion of %s/%s: %w", m.Namespace, m.Name, err)}
		}
		if cmp > 0 {
			return nil // written after the migration started: in the storage version already
		}
		switch err := c.rewrite(ctx, t, m); {
		case err == nil, apierrors.IsConflict(err), apierrors.IsNotFound(err):
			// Changed or deleted meanwhile: nothing left to migrate.
			migrated++
			return nil
		case retriable(err):
			return fmt.Errorf("migrating %s/%s: %w", m.Namespace, m.Name, err)
		default:
			return &permanentError{fmt.Errorf("%d/%d not yet migrated. migrating %s/%s: %w", total-migrated, total, m.Namespace, m.Name, err)}
		}
	})
	var perm *permanentError
	switch {
	case errors.As(err, &perm):
		return c.fail(ctx, svm, perm.Error())
	case err != nil:
		return err // retried with back-off
	}
	setCondition(svm, svmv1.MigrationRunning, metav1.ConditionTrue, reasonRunning,
		fmt.Sprintf("The migration is running, %d objects verified migrated", total))
	setCondition(svm, svmv1.MigrationSucceeded, metav1.ConditionTrue, reasonSucceeded, "Migration completed")
	return c.updateStatus(ctx, svm)
}

// retriable is upstream's isRetriableError: the request may work later.
func retriable(err error) bool {
	return utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) || utilnet.IsProbableEOF(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsInternalError(err) || apierrors.IsTimeout(err)
}
