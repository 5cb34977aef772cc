package apiserver

import (
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// transformObject turns one object into the negotiated representation.
func (s *Server) transformObject(_ *http.Request, rc *reqCtx, obj runtime.Object) (interface{}, error) {
	switch rc.out.kind {
	case outTable:
		m := objectMeta(obj)
		return s.toTable(rc, []runtime.Object{obj}, metav1.ListMeta{ResourceVersion: m.GetResourceVersion()}, true), nil
	case outPartial:
		return toPartial(obj, rc.out.version), nil
	}
	return obj, nil
}

// transformList builds the list response of items in the negotiated representation.
func (s *Server) transformList(rc *reqCtx, items []runtime.Object, lm metav1.ListMeta) (interface{}, error) {
	switch rc.out.kind {
	case outTable:
		return s.toTable(rc, items, lm, true), nil
	case outPartial:
		l := &metav1.PartialObjectMetadataList{ListMeta: lm, Items: make([]metav1.PartialObjectMetadata, 0, len(items))}
		l.APIVersion, l.Kind = "meta.k8s.io/"+rc.out.version, "PartialObjectMetadataList"
		for _, it := range items {
			l.Items = append(l.Items, *toPartial(it, rc.out.version))
		}
		return l, nil
	}
	list := rc.res.NewList()
	if err := meta.SetList(list, items); err != nil {
		return nil, err
	}
	la, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	la.SetResourceVersion(lm.ResourceVersion)
	la.SetContinue(lm.Continue)
	la.SetRemainingItemCount(lm.RemainingItemCount)
	list.GetObjectKind().SetGroupVersionKind(rc.res.GroupVersion.WithKind(rc.res.Kind + "List"))
	return list, nil
}

// toTable prints items with the strategy's columns (all of them: kubectl
// drops priority > 0 columns itself unless -o wide).
func (s *Server) toTable(rc *reqCtx, items []runtime.Object, lm metav1.ListMeta, withColumns bool) *metav1.Table {
	t := &metav1.Table{ListMeta: lm, Rows: make([]metav1.TableRow, 0, len(items))}
	t.APIVersion, t.Kind = "meta.k8s.io/"+tableVersion(rc), "Table"
	if withColumns {
		t.ColumnDefinitions = rc.res.Strategy.TableColumns()
	}
	include := rc.query.Get("includeObject")
	for _, it := range items {
		row := metav1.TableRow{Cells: rc.res.Strategy.TableRow(it)}
		switch include {
		case "None":
		case "Object":
			row.Object = runtime.RawExtension{Object: it}
		default:
			row.Object = runtime.RawExtension{Object: toPartial(it, "v1")}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func tableVersion(rc *reqCtx) string {
	if rc.out.version == "" {
		return "v1"
	}
	return rc.out.version
}

// toPartial returns the metadata of obj as a PartialObjectMetadata.
func toPartial(obj runtime.Object, version string) *metav1.PartialObjectMetadata {
	if version == "" {
		version = "v1"
	}
	p := &metav1.PartialObjectMetadata{}
	p.APIVersion, p.Kind = "meta.k8s.io/"+version, "PartialObjectMetadata"
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if om, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			p.ObjectMeta = *om.DeepCopy()
		}
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		// custom resources: ObjectMeta from the unstructured content
		if m, found := u.Object["metadata"].(map[string]interface{}); found {
			_ = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &p.ObjectMeta)
		}
	}
	return p
}
