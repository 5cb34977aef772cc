package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/orch/orch/server/webhookclient"
)

// Resolver finds a ready endpoint of a Service port.
type Resolver = webhookclient.Resolver

// call POSTs review to the webhook of h, as the AdmissionReview version
// it speaks (v1 and v1beta1 have the same fields), and returns its
// response.
func (d *Dispatcher) call(ctx context.Context, h hook, review *admissionv1.AdmissionReview) (*admissionv1.AdmissionResponse, error) {
	r := *review
	r.APIVersion = h.review
	body, err := json.Marshal(&r)
	if err != nil {
		return nil, err
	}
	data, err := d.client.Post(ctx, clientConfig(h.cc), h.timeout, body)
	if err != nil {
		return nil, err
	}
	return decodeResponse(data, review.Request.UID, h.review)
}

// reviewVersion is the first AdmissionReview version of the webhook's
// list that orch speaks (admission.k8s.io/v1 or v1beta1).
func reviewVersion(versions []string) string {
	for _, v := range versions {
		if v == "v1" || v == "v1beta1" {
			return "admission.k8s.io/" + v
		}
	}
	return "admission.k8s.io/v1"
}

func clientConfig(cc admissionregistrationv1.WebhookClientConfig) webhookclient.Config {
	out := webhookclient.Config{URL: cc.URL, CABundle: cc.CABundle}
	if s := cc.Service; s != nil {
		out.Service = &webhookclient.Service{Namespace: s.Namespace, Name: s.Name, Path: s.Path, Port: s.Port}
	}
	return out
}
func decodeResponse(data []byte, uid any, version string) (*admissionv1.AdmissionResponse, error) {
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("received invalid webhook response: %w", err)
	}
	if out.Response == nil {
		return nil, errors.New("webhook response was absent")
	}
	if out.APIVersion != version || out.Kind != "AdmissionReview" {
		return nil, fmt.Errorf("expected webhook response of %s, Kind=AdmissionReview, got %s, Kind=%s", version, out.APIVersion, out.Kind)
	}
	if fmt.Sprint(out.Response.UID) != fmt.Sprint(uid) {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, out.Response.UID)
	}
	return out.Response, nil
}
