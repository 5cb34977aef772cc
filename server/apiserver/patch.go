package apiserver

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// patchRequest is a read patch body and its type.
type patchRequest struct {
	typ  types.PatchType
	data []byte
}

// readPatch reads a PATCH body; the Content-Type picks the patch type.
// Server-side apply is not served yet (415).
func (s *Server) readPatch(w http.ResponseWriter, r *http.Request) (*patchRequest, error) {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return nil, unsupportedPatch(ct)
	}
	pt := types.PatchType(mt)
	switch pt {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType:
	case types.ApplyYAMLPatchType:
	case types.ApplyCBORPatchType:
		return nil, unsupportedPatchMsg(fmt.Sprintf("%s is not supported: use application/apply-patch+yaml", mt))
	default:
		return nil, unsupportedPatch(ct)
	}
	data, err := s.readBody(w, r)
	if err != nil {
		return nil, err
	}
	return &patchRequest{typ: pt, data: data}, nil
}

func unsupportedPatch(ct string) error {
	return unsupportedPatchMsg(fmt.Sprintf("the body of the request was in an unknown format (%s) - accepted media types include: "+
		"application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json", ct))
}

func unsupportedPatchMsg(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType,
		Reason: metav1.StatusReasonUnsupportedMediaType, Message: msg,
	}}
}

// apply applies the patch to original JSON; schema is the Go type strategic
// merge patches read their merge keys from.
func (p *patchRequest) apply(original []byte, schemaObj runtime.Object, gk schema.GroupKind, name string) ([]byte, error) {
	switch p.typ {
	case types.JSONPatchType:
		ops, err := jsonpatch.DecodePatch(p.data)
		if err != nil {
			return nil, badRequestf("invalid JSON patch: %v", err)
		}
		out, err := ops.Apply(original)
		if err != nil {
			return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("patch"), string(p.data), err.Error())})
		}
		return out, nil
	case types.MergePatchType:
		if !json.Valid(p.data) {
			return nil, badRequestf("invalid merge patch: the body is not valid JSON")
		}
		out, err := jsonpatch.MergePatch(original, p.data)
		if err != nil {
			return nil, badRequestf("invalid merge patch: %v", err)
		}
		return out, nil
	}
	if _, custom := schemaObj.(*unstructured.Unstructured); custom {
		return nil, unsupportedPatchMsg("the body of the request was in an unknown format - accepted media types include: " +
			"application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
	}
	if !json.Valid(p.data) {
		return nil, badRequestf("invalid strategic merge patch: the body is not valid JSON")
	}
	out, err := strategicpatch.StrategicMergePatch(original, p.data, schemaObj)
	if err != nil {
		return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("patch"), string(p.data), err.Error())})
	}
	return out, nil
}

// handlePatch serves PATCH of an object or its status, retried on store
// conflicts (re-applied to the newest object) unless the patch sets a
// resourceVersion.
func (s *Server) handlePatch(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	p, err := s.readPatch(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	dryRun, err := parseDryRun(rc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if p.typ == types.ApplyYAMLPatchType {
		s.handleApply(w, r, rc, p, dryRun)
		return
	}
	if rc.query.Get("force") != "" {
		s.writeError(w, r, badRequestf("force: Invalid value: %q: may not be specified for non-apply patch", rc.query.Get("force")))
		return
	}
	mode := updateModeOf(rc)
	gvk := rc.res.GroupVersion.WithKind(rc.res.Kind)
	res, err := s.guaranteedUpdate(r.Context(), rc, mode, dryRun, func(cur runtime.Object) (runtime.Object, error) {
		original, err := json.Marshal(cur)
		if err != nil {
			return nil, fmt.Errorf("encode %s for patching: %w", rc.res.Kind, err)
		}
		patched, err := p.apply(original, rc.res.New(), gvk.GroupKind(), rc.name)
		if err != nil {
			return nil, err
		}
		obj, err := s.decodeInto(w, rc, patched, formatJSON, gvk)
		if err != nil {
			return nil, err
		}
		unconditionalIfSameRV(obj, cur)
		return obj, checkNameAndNamespace(rc, obj)
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, rc, http.StatusOK, res.obj)
}

// unconditionalIfSameRV clears the resourceVersion a patch did not change, so
// that only a patch that sets one is a precondition; the write itself stays
// a compare-and-swap on the revision read.
func unconditionalIfSameRV(obj, cur runtime.Object) {
	m := objectMeta(obj)
	if m.GetResourceVersion() == objectMeta(cur).GetResourceVersion() {
		m.SetResourceVersion("")
	}
}
