package garbagecollector

import (
	"context"
	"encoding/json"
	"fmt"
	"path"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// objectPath is the REST path of one object of gvr.
func objectPath(gvr schema.GroupVersionResource, namespace, name string) string {
	p := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		p = "/api/" + gvr.Version
	}
	if namespace != "" {
		p = path.Join(p, "namespaces", namespace)
	}
	return path.Join(p, gvr.Resource, name)
}

// getMeta reads the metadata of one object live (not from the cache), as
// JSON whatever the client prefers.
func (c *Controller) getMeta(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*metav1.ObjectMeta, error) {
	raw, err := c.client.CoreV1().RESTClient().Get().AbsPath(objectPath(gvr, namespace, name)).
		SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var obj struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decode %s %s/%s: %w", gvr.Resource, namespace, name, err)
	}
	return &obj.Metadata, nil
}

// deleteObject deletes n (uid precondition) with propagation policy p.
func (c *Controller) deleteObject(ctx context.Context, n *node, p metav1.DeletionPropagation) error {
	uid := n.uid
	opts := &metav1.DeleteOptions{PropagationPolicy: &p, Preconditions: &metav1.Preconditions{UID: &uid}}
	body, err := json.Marshal(opts)
	if err != nil {
		return err
	}
	err = c.client.CoreV1().RESTClient().Delete().AbsPath(objectPath(n.res, n.namespace, n.name)).
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete %s %s/%s: %w", n.res.Resource, n.namespace, n.name, err)
	}
	return nil
}

// jsonPatch applies a JSON patch that first tests the object's uid, so a
// re-created object of the same name is never touched.
func (c *Controller) jsonPatch(ctx context.Context, n *node, ops ...map[string]any) error {
	all := append([]map[string]any{{"op": "test", "path": "/metadata/uid", "value": n.uid}}, ops...)
	body, err := json.Marshal(all)
	if err != nil {
		return err
	}
	err = c.client.CoreV1().RESTClient().Patch(types.JSONPatchType).AbsPath(objectPath(n.res, n.namespace, n.name)).
		Body(body).Do(ctx).Error()
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("patch %s %s/%s: %w", n.res.Resource, n.namespace, n.name, err)
	}
	return nil
}
