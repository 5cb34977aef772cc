package apiserver

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// isUnstructured reports whether rc's resource holds unstructured objects
// (custom resources).
func isUnstructured(rc *reqCtx) bool {
	_, ok := rc.res.New().(*unstructured.Unstructured)
	return ok
}

// decodeUnstructured decodes a custom resource body (JSON or YAML), checks
// its apiVersion and kind, and prunes the fields its schema does not know:
// an error under fieldValidation=Strict, warnings under Warn.
func (s *Server) decodeUnstructured(w http.ResponseWriter, rc *reqCtx, data []byte, format bodyFormat, gvk schema.GroupVersionKind) (runtime.Object, error) {
	mode, err := fieldValidation(rc)
	if err != nil {
		return nil, err
	}
	switch format {
	case formatProtobuf:
		return nil, unsupportedMediaType(runtime.ContentTypeProtobuf)
	case formatYAML:
		if data, err = yaml.YAMLToJSON(data); err != nil {
			return nil, badRequestf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, gvk.Kind, err)
		}
	}
	m := map[string]interface{}{}
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return nil, badRequestf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, gvk.Kind, err)
	}
	u := &unstructured.Unstructured{Object: m}
	if av := u.GetAPIVersion(); av != gvk.GroupVersion().String() {
		return nil, badRequestf("the API version in the data (%s) does not match the expected API version (%s)", av, gvk.GroupVersion().String())
	}
	if u.GetKind() != gvk.Kind {
		return nil, badRequestf("the kind in the data (%s) does not match the expected kind (%s)", u.GetKind(), gvk.Kind)
	}
	if rc.res.PruneUnknown != nil {
		if unknown := rc.res.PruneUnknown(m); len(unknown) > 0 && mode != "Ignore" {
			msgs := make([]string, len(unknown))
			for i, p := range unknown {
				msgs[i] = fmt.Sprintf("unknown field %q", p)
			}
			if mode == "Strict" {
				return nil, badRequestf("%s in version %q cannot be handled as a %s: strict decoding error: %s",
					gvk.Kind, gvk.Version, gvk.Kind, strings.Join(msgs, ", "))
			}
			for _, msg := range msgs {
				addWarning(w, msg)
			}
		}
	}
	return u, nil
}
