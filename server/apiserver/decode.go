package apiserver

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	sigsjson "sigs.k8s.io/json"
)

// decoders are apimachinery's JSON/YAML serializers, strict or lenient,
// and the protobuf one (client-go's typed clients send protobuf bodies).
type decoders struct {
	json, yaml, strictJSON, strictYAML *kjson.Serializer
	protobuf                           *protobuf.Serializer
}

func newDecoders(scheme *runtime.Scheme) decoders {
	mk := func(y, strict bool) *kjson.Serializer {
		return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
			kjson.SerializerOptions{Yaml: y, Strict: strict})
	}
	return decoders{json: mk(false, false), yaml: mk(true, false), strictJSON: mk(false, true), strictYAML: mk(true, true),
		protobuf: protobuf.NewSerializer(scheme, scheme)}
}

// fieldValidation is the fieldValidation query parameter: Strict, Warn (the
// default) or Ignore.
func fieldValidation(rc *reqCtx) (string, error) {
	v := rc.query.Get("fieldValidation")
	switch v {
	case "":
		return "Warn", nil
	case "Strict", "Warn", "Ignore":
		return v, nil
	}
	return "", badRequestf("fieldValidation parameter unsupported: %q (must be Strict, Warn or Ignore)", v)
}

// readBody reads the request body up to the configured limit; bigger bodies
// are a 413 without reading them all.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	limit := s.cfg.MaxRequestBodyBytes
	tooLarge := apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
	if r.ContentLength > limit {
		return nil, tooLarge
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, tooLarge
	}
	if err != nil {
		return nil, badRequestf("reading the request body: %v", err)
	}
	return data, nil
}

// bodyFormat is the encoding of a request body.
type bodyFormat int

const (
	formatJSON bodyFormat = iota
	formatYAML
	formatProtobuf
)

// requestFormat reads Content-Type: JSON (the default), YAML or protobuf;
// anything else is a 415.
func requestFormat(r *http.Request) (bodyFormat, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return formatJSON, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return 0, unsupportedMediaType(ct)
	}
	switch mt {
	case "application/json", "*/*":
		return formatJSON, nil
	case "application/yaml", "application/x-yaml", "text/yaml":
		return formatYAML, nil
	case runtime.ContentTypeProtobuf:
		return formatProtobuf, nil
	}
	return 0, unsupportedMediaType(ct)
}

func unsupportedMediaType(ct string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format (%s) - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf", ct),
	}}
}

// decodeInto decodes data as gvk (the kind the URL expects) with the
// request's field validation. Unknown or duplicate fields fail (Strict) or
// become Warning headers (Warn). The data's apiVersion/kind must match gvk.
func (s *Server) decodeInto(w http.ResponseWriter, rc *reqCtx, data []byte, format bodyFormat, gvk schema.GroupVersionKind) (runtime.Object, error) {
	if isUnstructured(rc) && gvk == rc.res.GroupVersion.WithKind(rc.res.Kind) {
		return s.decodeUnstructured(w, rc, data, format, gvk)
	}
	mode, err := fieldValidation(rc)
	if err != nil {
		return nil, err
	}
	into, err := s.scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("new %s: %w", gvk, err)
	}
	var obj runtime.Object
	var actual *schema.GroupVersionKind
	if format == formatJSON {
		obj, actual, err = decodeTypedJSON(data, mode != "Ignore", gvk, into)
	} else {
		obj, actual, err = s.pickDecoder(mode, format).Decode(data, &gvk, into)
	}
	if err != nil && runtime.IsStrictDecodingError(err) && mode == "Warn" && obj != nil {
		if sde, ok := runtime.AsStrictDecodingError(err); ok {
			for _, e := range sde.Errors() {
				addWarning(w, e.Error())
			}
		}
		err = nil
	}
	if err != nil {
		return nil, badRequestf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, gvk.Kind, err)
	}
	if actual.GroupVersion() != gvk.GroupVersion() {
		return nil, badRequestf("the API version in the data (%s) does not match the expected API version (%s)",
			actual.GroupVersion().String(), gvk.GroupVersion().String())
	}
	if actual.Kind != gvk.Kind {
		return nil, badRequestf("the kind in the data (%s) does not match the expected kind (%s)", actual.Kind, gvk.Kind)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, nil
}

// decodeTypedJSON decodes a JSON body into a typed object in one pass.
// apimachinery's JSON serializer first reads apiVersion and kind in a pass
// of its own, then decodes; a typed object's TypeMeta holds them after the
// one pass, defaulted from gvk as the serializer defaults them. Strict
// decoding reports unknown and duplicate fields as a strict decoding error
// with the decoded object, as the serializer does.
func decodeTypedJSON(data []byte, strict bool, gvk schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	var strictErrs []error
	var err error
	if strict {
		strictErrs, err = sigsjson.UnmarshalStrict(data, into)
	} else {
		err = sigsjson.UnmarshalCaseSensitivePreserveInts(data, into)
	}
	if err != nil {
		return nil, nil, err
	}
	actual := gvkWithDefaults(into.GetObjectKind().GroupVersionKind(), gvk)
	if len(strictErrs) > 0 {
		return into, &actual, runtime.NewStrictDecodingError(strictErrs)
	}
	return into, &actual, nil
}

// gvkWithDefaults fills what the data left out of its apiVersion and kind
// from defaults, as apimachinery's JSON serializer does.
func gvkWithDefaults(actual, defaults schema.GroupVersionKind) schema.GroupVersionKind {
	if len(actual.Kind) == 0 {
		actual.Kind = defaults.Kind
	}
	if len(actual.Version) == 0 && len(actual.Group) == 0 {
		actual.Group = defaults.Group
		actual.Version = defaults.Version
	}
	if len(actual.Version) == 0 && actual.Group == defaults.Group {
		actual.Version = defaults.Version
	}
	return actual
}

func (s *Server) pickDecoder(mode string, format bodyFormat) runtime.Decoder {
	if format == formatProtobuf {
		return s.dec.protobuf
	}
	strict, isYAML := mode != "Ignore", format == formatYAML
	switch {
	case isYAML && strict:
		return s.dec.strictYAML
	case isYAML:
		return s.dec.yaml
	case strict:
		return s.dec.strictJSON
	}
	return s.dec.json
}

// addWarning adds a `Warning: 299 - "msg"` header, as kube-apiserver does.
func addWarning(w http.ResponseWriter, msg string) {
	msg = strings.ReplaceAll(msg, `"`, `\"`)
	w.Header().Add("Warning", fmt.Sprintf(`299 - "%s"`, msg))
}
