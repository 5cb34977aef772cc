package apiserver

import (
	"context"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// handleApply serves server-side apply (PATCH with
// application/apply-patch+yaml): the applied configuration is merged into
// the live object by the field manager, which owns conflicts (409 naming
// the fields and managers unless force=true). A missing object is created.
func (s *Server) handleApply(w http.ResponseWriter, r *http.Request, rc *reqCtx, p *patchRequest, dryRun bool) {
	applied, err := s.decodeApplied(w, rc, p.data)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	manager := rc.query.Get("fieldManager")
	if manager == "" {
		s.writeError(w, r, badRequestf("PATCH /%s: fieldManager is required for apply requests", rc.info.Path))
		return
	}
	if _, err := managerName(rc); err != nil {
		s.writeError(w, r, err)
		return
	}
	force := isTrue(rc.query.Get("force"))
	sub, mode := "", updateModeOf(rc)
	if mode != modeMain {
		sub = rc.info.Subresource
	}
	fm, err := s.fieldManager(rc, sub)
	if err != nil {
		s.writeError(w, r, apierrors.NewInternalError(errFieldManager(err)))
		return
	}
	rc.applying = true
	res, err := s.guaranteedUpdate(r.Context(), rc, mode, dryRun, func(cur runtime.Object) (runtime.Object, error) {
		setTypeMeta(rc.res, cur)
		out, err := fm.Apply(cur, applied.DeepCopy(), manager, force)
		if err != nil {
			return nil, applyError(err)
		}
		unconditionalIfSameRV(out, cur)
		return out, nil
	})
	if apierrors.IsNotFound(err) && mode == modeMain {
		s.applyCreate(w, r, rc, applied, manager, force, dryRun)
		return
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, rc, http.StatusOK, res.obj)
}

// applyCreate creates the object an apply named (201).
func (s *Server) applyCreate(w http.ResponseWriter, r *http.Request, rc *reqCtx, applied *unstructured.Unstructured,
	manager string, force, dryRun bool) {
	fm, err := s.fieldManager(rc, "")
	if err != nil {
		s.writeError(w, r, apierrors.NewInternalError(errFieldManager(err)))
		return
	}
	live := rc.res.New()
	setTypeMeta(rc.res, live)
	obj, err := fm.Apply(live, applied.DeepCopy(), manager, force)
	if err != nil {
		s.writeError(w, r, applyError(err))
		return
	}
	out, err := s.create(context.WithValue(r.Context(), applyCreateKey{}, true), rc, obj, dryRun)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, rc, http.StatusCreated, out)
}

// applyCreateKey marks a create whose managedFields the apply already set.
type applyCreateKey struct{}

// appliedJSON converts an apply body to JSON. Unless mode is Ignore it is
// parsed strictly first (duplicate keys: an error under Strict, a warning
// under Warn, malformed YAML an error either way); only a body that fails
// the strict parse is parsed a second time.
func appliedJSON(w http.ResponseWriter, data []byte, mode string) ([]byte, error) {
	var strictErr error
	if mode != "Ignore" {
		js, err := yaml.YAMLToJSONStrict(data)
		if err == nil {
			return js, nil
		}
		strictErr = err
	}
	js, err := yaml.YAMLToJSON(data)
	switch {
	case err != nil:
		return nil, badRequestf("error decoding YAML: %v", err)
	case strictErr != nil && mode == "Strict":
		return nil, badRequestf("error strict decoding YAML: %v", strictErr)
	case strictErr != nil:
		addWarning(w, strictErr.Error())
	}
	return js, nil
}

// checkAppliedFields handles the fields of a custom resource's apply
// configuration its schema does not declare: an error under Strict (in
// structured-merge-diff's words, as upstream); under Warn (with warnings)
// and Ignore they are dropped from m, as the stored object would drop
// them, so that apply types the rest by the schema.
func checkAppliedFields(w http.ResponseWriter, rc *reqCtx, m map[string]interface{}, mode string) error {
	if rc.res.PruneUnknown == nil {
		return nil
	}
	if mode != "Strict" {
		for _, p := range rc.res.PruneUnknown(m) {
			if mode == "Warn" {
				addWarning(w, "."+p+": field not declared in schema")
			}
		}
		return nil
	}
	unknown := rc.res.PruneUnknown(runtime.DeepCopyJSON(m))
	msgs := make([]string, len(unknown))
	for i, p := range unknown {
		msgs[i] = "." + p + ": field not declared in schema"
	}
	if len(msgs) > 0 {
		return badRequestf("failed to create typed patch object (%s): %s", rc.res.GroupVersion.WithKind(rc.res.Kind), strings.Join(msgs, ", "))
	}
	return nil
}

// applyError makes an apply configuration that does not fit the
// resource's types (a string where the schema has a number) a 400 naming
// the field; the field manager reports it as a plain error.
func applyError(err error) error {
	if _, ok := err.(apierrors.APIStatus); !ok && strings.HasPrefix(err.Error(), "failed to create typed patch object") {
		return badRequestf("%v", err)
	}
	return err
}

// decodeApplied parses an apply body (YAML or JSON) as an unstructured
// object of the URL's kind, named as the URL names it.
func (s *Server) decodeApplied(w http.ResponseWriter, rc *reqCtx, data []byte) (*unstructured.Unstructured, error) {
	mode, err := fieldValidation(rc)
	if err != nil {
		return nil, err
	}
	js, err := appliedJSON(w, data, mode)
	if err != nil {
		return nil, err
	}
	m := map[string]interface{}{}
	if err := utiljson.Unmarshal(js, &m); err != nil {
		return nil, badRequestf("error decoding YAML: %v", err)
	}
	if err := checkAppliedFields(w, rc, m, mode); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	gvk := rc.res.GroupVersion.WithKind(rc.res.Kind)
	if u.GetAPIVersion() != gvk.GroupVersion().String() || u.GetKind() != gvk.Kind {
		return nil, badRequestf("the apply configuration's apiVersion %q and kind %q do not match the URL's %s, Kind=%s",
			u.GetAPIVersion(), u.GetKind(), gvk.GroupVersion(), gvk.Kind)
	}
	if u.GetName() != rc.name {
		return nil, badRequestf("the name of the object (%s) does not match the name on the URL (%s)", u.GetName(), rc.name)
	}
	if rc.res.Namespaced && u.GetNamespace() != "" && u.GetNamespace() != rc.ns {
		return nil, badRequestf("the namespace of the object (%s) does not match the namespace on the URL (%s)", u.GetNamespace(), rc.ns)
	}
	if rc.res.Namespaced {
		u.SetNamespace(rc.ns)
	}
	return u, nil
}
