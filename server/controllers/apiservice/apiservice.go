package apiservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/server/aggregator"
	"github.com/orch/orch/server/registry/apiregistration"
)

// Period is how often every APIService is checked, as upstream.
const Period = 30 * time.Second

const basePath = "/apis/apiregistration.k8s.io/v1/apiservices"

// Controller keeps the Available condition of APIServices.
type Controller struct {
	Client rest.Interface // any REST client of the API server (loopback)
	Proxy  *aggregator.Proxy
	Log    *zap.Logger
}

// Run checks every Period until ctx ends. Run it only on the leader.
func (c *Controller) Run(ctx context.Context) error {
	t := time.NewTicker(Period)
	defer t.Stop()
	for {
		if err := c.Sync(ctx); err != nil && ctx.Err() == nil {
			c.Log.Warn("checking APIServices", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Sync checks every non-local APIService once.
func (c *Controller) Sync(ctx context.Context) error {
	var list apiregistration.APIServiceList
	raw, err := c.Client.Get().AbsPath(basePath).DoRaw(ctx)
	if err == nil {
		err = json.Unmarshal(raw, &list)
	}
	if err != nil {
		return fmt.Errorf("list APIServices: %w", err)
	}
	var errs []error
	for i := range list.Items {
		a := &list.Items[i]
		if a.Spec.Service == nil {
			continue
		}
		status, reason, msg := c.check(ctx, a)
		errs = append(errs, c.setAvailable(ctx, a, status, reason, msg))
	}
	return errors.Join(errs...)
}

func (c *Controller) check(ctx context.Context, a *apiregistration.APIService) (apiregistration.ConditionStatus, string, string) {
	port := int32(443)
	if a.Spec.Service.Port != nil {
		port = *a.Spec.Service.Port
	}
	u, err := c.Proxy.Resolver.ResolveEndpoint(ctx, a.Spec.Service.Namespace, a.Spec.Service.Name, port)
	switch {
	case errors.Is(err, aggregator.ErrServiceNotFound):
		return apiregistration.ConditionFalse, "ServiceNotFound", err.Error()
	case err != nil:
		return apiregistration.ConditionFalse, "MissingEndpoints", err.Error()
	}
	tr, err := c.Proxy.Transport(a)
	if err != nil {
		return apiregistration.ConditionFalse, "FailedDiscoveryCheck", err.Error()
	}
	defer tr.CloseIdleConnections()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(cctx, http.MethodGet, u.String()+"/apis/"+a.Spec.Group+"/"+a.Spec.Version, nil)
	req.Header.Set("X-Remote-User", "system:kube-aggregator")
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return apiregistration.ConditionFalse, "FailedDiscoveryCheck", "failing or missing response from " + u.String() + ": " + err.Error()
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return apiregistration.ConditionFalse, "FailedDiscoveryCheck", fmt.Sprintf("bad status from %s: %d", u, resp.StatusCode)
	}
	return apiregistration.ConditionTrue, "Passed", "all checks passed"
}

func (c *Controller) setAvailable(ctx context.Context, a *apiregistration.APIService, st apiregistration.ConditionStatus, reason, msg string) error {
	cond := apiregistration.APIServiceCondition{Type: apiregistration.Available, Status: st, Reason: reason, Message: msg,
		LastTransitionTime: metav1.Now()}
	for i, old := range a.Status.Conditions {
		if old.Type != apiregistration.Available {
			continue
		}
		if old.Status == st && old.Reason == reason && old.Message == msg {
			return nil
		}
		if old.Status == st {
			cond.LastTransitionTime = old.LastTransitionTime
		}
		a.Status.Conditions[i] = cond
		return c.put(ctx, a)
	}
	a.Status.Conditions = append(a.Status.Conditions, cond)
	return c.put(ctx, a)
}

func (c *Controller) put(ctx context.Context, a *apiregistration.APIService) error {
	body, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if err := c.Client.Put().AbsPath(basePath, a.Name, "status").Body(body).Do(ctx).Error(); err != nil {
		return fmt.Errorf("update APIService %s status: %w", a.Name, err)
	}
	c.Log.Info("APIService availability changed", zap.String("name", a.Name))
	return nil
}
