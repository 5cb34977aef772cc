package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/orch/orch/server/webhookclient"
)

// Resolver finds a ready endpoint of a Service port.
type Resolver = webhookclient.Resolver

// call POSTs review to the webhook and returns its response.
func (d *Dispatcher) call(ctx context.Context, cc admissionregistrationv1.WebhookClientConfig, timeout time.Duration,
	review *admissionv1.AdmissionReview) (*admissionv1.AdmissionResponse, error) {
	body, err := json.Marshal(review)
	if err != nil {
		return nil, err
	}
	data, err := d.client.Post(ctx, clientConfig(cc), timeout, body)
	if err != nil {
		return nil, err
	}
	return decodeResponse(data, review.Request.UID)
}

func clientConfig(cc admissionregistrationv1.WebhookClientConfig) webhookclient.Config {
	out := webhookclient.Config{URL: cc.URL, CABundle: cc.CABundle}
	if s := cc.Service; s != nil {
		out.Service = &webhookclient.Service{Namespace: s.Namespace, Name: s.Name, Path: s.Path, Port: s.Port}
	}
	return out
}
func decodeResponse(data []byte, uid any) (*admissionv1.AdmissionResponse, error) {
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("received invalid webhook response: %w", err)
	}
	if out.Response == nil {
		return nil, errors.New("webhook response was absent")
	}
	if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" {
		return nil, fmt.Errorf("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got %s, Kind=%s", out.APIVersion, out.Kind)
	}
	if fmt.Sprint(out.Response.UID) != fmt.Sprint(uid) {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, out.Response.UID)
	}
	return out.Response, nil
}
