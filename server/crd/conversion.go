package crd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/webhookclient"
)

// conversionTimeout is how long a conversion webhook may take (upstream's).
const conversionTimeout = 30 * time.Second

// webhookConverter converts a CRD's objects with its conversion webhook,
// ConversionReview v1 (or v1beta1 when that is all the webhook speaks).
type webhookConverter struct {
	client *webhookclient.Client
	cc     webhookclient.Config
	review string // the ConversionReview apiVersion sent
	kind   schema.GroupKind
}

// conversionOf is the registry.Conversion of c: through its webhook, or
// for the None strategy by setting apiVersion (upstream's nopConverter), so
// objects are stored in the storage version either way.
func conversionOf(c *apiextensionsv1.CustomResourceDefinition, client *webhookclient.Client) (*registry.Conversion, error) {
	conv := c.Spec.Conversion
	if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter {
		return &registry.Conversion{Storage: storageVersion(c), Convert: convertNone}, nil
	}
	if conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
		return nil, errors.New("spec.conversion.webhook.clientConfig is required")
	}
	review := ""
	for _, v := range conv.Webhook.ConversionReviewVersions {
		if v == "v1" || (v == "v1beta1" && review == "") {
			review = "apiextensions.k8s.io/" + v
		}
	}
	if review == "" {
		return nil, fmt.Errorf("no supported conversionReviewVersions in %v", conv.Webhook.ConversionReviewVersions)
	}
	w := &webhookConverter{client: client, cc: clientConfig(conv.Webhook.ClientConfig), review: review,
		kind: schema.GroupKind{Group: c.Spec.Group, Kind: c.Status.AcceptedNames.Kind}}
	return &registry.Conversion{Storage: storageVersion(c), Convert: w.convert}, nil
}

func storageVersion(c *apiextensionsv1.CustomResourceDefinition) schema.GroupVersion {
	for _, v := range c.Spec.Versions {
		if v.Storage {
			return schema.GroupVersion{Group: c.Spec.Group, Version: v.Name}
		}
	}
	return schema.GroupVersion{Group: c.Spec.Group}
}

func clientConfig(cc *apiextensionsv1.WebhookClientConfig) webhookclient.Config {
	out := webhookclient.Config{URL: cc.URL, CABundle: cc.CABundle}
	if s := cc.Service; s != nil {
		out.Service = &webhookclient.Service{Namespace: s.Namespace, Name: s.Name, Path: s.Path, Port: s.Port}
	}
	return out
}

// convertNone is the None strategy: only apiVersion changes.
func convertNone(_ context.Context, objs []runtime.Object, to schema.GroupVersion) error {
	for _, o := range objs {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("converting %T: not a custom resource", o)
		}
		u.SetAPIVersion(to.String())
	}
	return nil
}

// convert sends the objects not yet in version to to the webhook, in one
// ConversionReview, and puts the answers in their place.
func (w *webhookConverter) convert(ctx context.Context, objs []runtime.Object, to schema.GroupVersion) error {
	var todo []*unstructured.Unstructured
	for _, o := range objs {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("converting %T: not a custom resource", o)
		}
		if u.GetAPIVersion() != to.String() {
			todo = append(todo, u)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	out, err := w.call(ctx, todo, to)
	if err != nil {
		return fmt.Errorf("conversion webhook for %s failed: %w", to.WithKind(w.kind.Kind), err)
	}
	for i, u := range todo {
		if err := w.accept(u, out[i], to); err != nil {
			return fmt.Errorf("conversion webhook for %s returned invalid converted object: %w", to.WithKind(w.kind.Kind), err)
		}
	}
	return nil
}

func (w *webhookConverter) call(ctx context.Context, objs []*unstructured.Unstructured, to schema.GroupVersion) ([]runtime.RawExtension, error) {
	req := &apiextensionsv1.ConversionRequest{UID: uuid.NewUUID(), DesiredAPIVersion: to.String()}
	for _, u := range objs {
		raw, err := u.MarshalJSON()
		if err != nil {
			return nil, err
		}
		req.Objects = append(req.Objects, runtime.RawExtension{Raw: raw})
	}
	review := apiextensionsv1.ConversionReview{TypeMeta: metav1.TypeMeta{APIVersion: w.review, Kind: "ConversionReview"}, Request: req}
	body, err := json.Marshal(review)
	if err != nil {
		return nil, err
	}
	data, err := w.client.Post(ctx, w.cc, conversionTimeout, body)
	if err != nil {
		return nil, err
	}
	return decodeConversion(data, req, len(objs))
}

func decodeConversion(data []byte, req *apiextensionsv1.ConversionRequest, n int) ([]runtime.RawExtension, error) {
	var out apiextensionsv1.ConversionReview
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("invalid ConversionReview: %w", err)
	}
	resp := out.Response
	switch {
	case resp == nil:
		return nil, errors.New("no response in the ConversionReview")
	case resp.UID != req.UID:
		return nil, fmt.Errorf("expected response.uid=%q, got %q", req.UID, resp.UID)
	case resp.Result.Status != metav1.StatusSuccess:
		return nil, fmt.Errorf("conversion failed: %s", resp.Result.Message)
	case len(resp.ConvertedObjects) != n:
		return nil, fmt.Errorf("expected %d converted objects, got %d", n, len(resp.ConvertedObjects))
	}
	return resp.ConvertedObjects, nil
}

// accept checks one converted object and puts it in u: the desired
// apiVersion, the same kind, and only labels and annotations of the
// metadata may change (the rest is restored from the original, as
// upstream does).
func (w *webhookConverter) accept(u *unstructured.Unstructured, raw runtime.RawExtension, to schema.GroupVersion) error {
	var conv unstructured.Unstructured
	if err := conv.UnmarshalJSON(raw.Raw); err != nil {
		return err
	}
	if conv.GetAPIVersion() != to.String() {
		return fmt.Errorf("apiVersion %q, expected %q", conv.GetAPIVersion(), to.String())
	}
	if conv.GetKind() != u.GetKind() {
		return fmt.Errorf("kind %q, expected %q", conv.GetKind(), u.GetKind())
	}
	if _, ok := conv.Object["metadata"].(map[string]interface{}); !ok {
		return errors.New("missing metadata")
	}
	labels, _, err := unstructured.NestedStringMap(conv.Object, "metadata", "labels")
	if err != nil {
		return fmt.Errorf("metadata.labels: %w", err)
	}
	annotations, _, err := unstructured.NestedStringMap(conv.Object, "metadata", "annotations")
	if err != nil {
		return fmt.Errorf("metadata.annotations: %w", err)
	}
	md, _ := u.Object["metadata"].(map[string]interface{})
	conv.Object["metadata"] = runtime.DeepCopyJSONValue(md)
	if md == nil {
		conv.Object["metadata"] = map[string]interface{}{}
	}
	conv.SetLabels(labels)
	conv.SetAnnotations(annotations)
	if errs := validateLabelsAnnotations(&conv); len(errs) > 0 {
		return errs.ToAggregate()
	}
	u.Object = conv.Object
	return nil
}

func validateLabelsAnnotations(u *unstructured.Unstructured) field.ErrorList {
	md := field.NewPath("metadata")
	errs := metavalidation.ValidateLabels(u.GetLabels(), md.Child("labels"))
	return append(errs, apivalidation.ValidateAnnotations(u.GetAnnotations(), md.Child("annotations"))...)
}
