package storageversionmigration

import (
	"context"
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"

// getCRD reads the CustomResourceDefinition of gr; nil when gr is not a
// custom resource.
func (c *Controller) getCRD(ctx context.Context, gr metav1.GroupResource) (*apiextensionsv1.CustomResourceDefinition, error) {
	if gr.Group == "" {
		return nil, nil
	}
	raw, err := c.kc.Client.CoreV1().RESTClient().Get().AbsPath(crdPath+gr.Resource+"."+gr.Group).
		SetHeader("Accept", "application/json").DoRaw(ctx)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the CRD of %s: %w", gr, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(raw, crd); err != nil {
		return nil, fmt.Errorf("decoding the CRD of %s: %w", gr, err)
	}
	return crd, nil
}

// setCRDMigrating records on a custom resource's CRD that a migration
// runs, with the generation it started at.
func (c *Controller) setCRDMigrating(ctx context.Context, gr metav1.GroupResource, svm string) error {
	crd, err := c.getCRD(ctx, gr)
	if err != nil || crd == nil {
		return err
	}
	setCRDCondition(crd, apiextensionsv1.ConditionTrue, "MigrationRunning", fmt.Sprintf("Migration %s is running", svm))
	return c.putCRDStatus(ctx, crd)
}

// finishCRD ends the StorageMigrating condition and, after a success that
// saw no change of the CRD, keeps only the storage version in
// status.storedVersions: every object is stored in it now.
func (c *Controller) finishCRD(ctx context.Context, gr metav1.GroupResource, success bool) error {
	crd, err := c.getCRD(ctx, gr)
	if err != nil || crd == nil {
		return err
	}
	var started *apiextensionsv1.CustomResourceDefinitionCondition
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == apiextensionsv1.StorageMigrating {
			started = &crd.Status.Conditions[i]
		}
	}
	unchanged := started != nil && started.ObservedGeneration == crd.Generation
	reason, msg := "MigrationFailed", "The migration has failed"
	if success {
		reason, msg = "MigrationSucceeded", "The migration has succeeded but the stored versions have not been updated due to a generation mismatch"
		if unchanged {
			msg = "The migration has succeeded and the stored versions have been updated"
			for _, v := range crd.Spec.Versions {
				if v.Storage {
					crd.Status.StoredVersions = []string{v.Name}
				}
			}
		}
	}
	setCRDCondition(crd, apiextensionsv1.ConditionFalse, reason, msg)
	return c.putCRDStatus(ctx, crd)
}

func setCRDCondition(crd *apiextensionsv1.CustomResourceDefinition, status apiextensionsv1.ConditionStatus, reason, msg string) {
	cond := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.StorageMigrating, Status: status,
		LastTransitionTime: metav1.Now(), Reason: reason, Message: msg, ObservedGeneration: crd.Generation}
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == apiextensionsv1.StorageMigrating {
			crd.Status.Conditions[i] = cond
			return
		}
	}
	crd.Status.Conditions = append(crd.Status.Conditions, cond)
}

// putCRDStatus writes crd's status (a conflict is an error: the sync
// runs again with the new CRD).
func (c *Controller) putCRDStatus(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	body, err := json.Marshal(crd)
	if err != nil {
		return err
	}
	err = c.kc.Client.CoreV1().RESTClient().Put().AbsPath(crdPath+crd.Name+"/status").
		SetHeader("Content-Type", "application/json").SetHeader("Accept", "application/json").Body(body).Do(ctx).Error()
	if err != nil {
		return fmt.Errorf("updating the status of CRD %s: %w", crd.Name, err)
	}
	return nil
}
