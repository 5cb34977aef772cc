package storageversionmigration

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// listPage is how many objects one list call returns.
const listPage = 500

// acceptPartialList asks for metadata only.
const acceptPartialList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

// target is a resource found in discovery.
type target struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	migratable bool // serves list, update and patch
}

// resolve finds gr in discovery at its group's preferred version; nil
// when the API server does not serve it.
func (c *Controller) resolve(gr metav1.GroupResource) (*target, error) {
	disc := c.kc.Client.Discovery()
	groups, err := disc.ServerGroups()
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	idx := slices.IndexFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == gr.Group })
	if idx < 0 {
		return nil, nil
	}
	gv := groups.Groups[idx].PreferredVersion.GroupVersion
	list, err := disc.ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovery of %s: %w", gv, err)
	}
	for _, r := range list.APIResources {
		if r.Name != gr.Resource {
			continue
		}
		pgv, err := schema.ParseGroupVersion(gv)
		if err != nil {
			return nil, fmt.Errorf("discovery of %s: %w", gv, err)
		}
		ok := true // upstream's verbsRequiredForMigration
		for _, v := range []string{"update", "patch", "list"} {
			ok = ok && slices.Contains(r.Verbs, v)
		}
		return &target{gvr: pgv.WithResource(r.Name), kind: r.Kind, namespaced: r.Namespaced, migratable: ok}, nil
	}
	return nil, nil
}

// collectionPath is the REST path of every object of gvr (all namespaces).
func collectionPath(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return path.Join("/api", gvr.Version, gvr.Resource)
	}
	return path.Join("/apis", gvr.Group, gvr.Version, gvr.Resource)
}

// objectPath is the REST path of one object of gvr.
func objectPath(gvr schema.GroupVersionResource, namespace, name string) string {
	p := path.Dir(collectionPath(gvr))
	if namespace != "" {
		p = path.Join(p, "namespaces", namespace)
	}
	return path.Join(p, gvr.Resource, name)
}

// list reads one page of the objects' metadata.
func (c *Controller) list(ctx context.Context, gvr schema.GroupVersionResource, limit int64, cont string) (*metav1.PartialObjectMetadataList, error) {
	req := c.kc.Client.CoreV1().RESTClient().Get().AbsPath(collectionPath(gvr)).
		SetHeader("Accept", acceptPartialList).Param("limit", strconv.FormatInt(limit, 10))
	if cont != "" {
		req = req.Param("continue", cont)
	}
	raw, err := req.DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
	}
	out := &metav1.PartialObjectMetadataList{}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("decoding the list of %s: %w", gvr.Resource, err)
	}
	return out, nil
}

// currentRV is the resourceVersion of gvr's collection now.
func (c *Controller) currentRV(ctx context.Context, gvr schema.GroupVersionResource) (string, error) {
	l, err := c.list(ctx, gvr, 1, "")
	if err != nil {
		return "", err
	}
	return l.ResourceVersion, nil
}

// forEach calls f with the metadata of every object of gvr, a page at a time.
func (c *Controller) forEach(ctx context.Context, gvr schema.GroupVersionResource, f func(metav1.PartialObjectMetadata) error) error {
	cont := ""
	for {
		l, err := c.list(ctx, gvr, listPage, cont)
		if err != nil {
			return err
		}
		for _, item := range l.Items {
			if err := f(item); err != nil {
				return err
			}
		}
		if cont = l.Continue; cont == "" {
			return nil
		}
	}
}

// rewrite writes an object back unchanged: a merge patch of its own
// apiVersion and kind that must match resourceVersion rv.
func (c *Controller) rewrite(ctx context.Context, t *target, m metav1.PartialObjectMetadata) error {
	body, err := json.Marshal(map[string]any{
		"apiVersion": t.gvr.GroupVersion().String(), "kind": t.kind,
		"metadata": map[string]string{"resourceVersion": m.ResourceVersion},
	})
	if err != nil {
		return err
	}
	return c.kc.Client.CoreV1().RESTClient().Patch(types.MergePatchType).AbsPath(objectPath(t.gvr, m.Namespace, m.Name)).
		Param("fieldManager", ControllerName).SetHeader("Accept", "application/json").Body(body).Do(ctx).Error()
}
