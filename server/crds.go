package server

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/internal/restconfig"
	"github.com/orch/orch/server/aggregator"
	"github.com/orch/orch/server/crd"
)

// customResources serves the custom resources of CRDs: the registry the
// API server looks them up in (every server) and the CRD controller (the
// leader's), both fed by one informer over the loopback client.
type customResources struct {
	reg  *crd.Registry
	ctrl *crd.Controller
}

func newCustomResources(log *zap.Logger) *customResources {
	return &customResources{reg: crd.NewRegistry(log)}
}

// start starts the informer; it returns the controller loop and a stop func.
func (c *customResources) start(loopback *rest.Config, log *zap.Logger) (controller, func(), error) {
	client, err := dynamic.NewForConfig(loopback)
	if err != nil {
		return controller{}, nil, fmt.Errorf("loopback dynamic client: %w", err)
	}
	typed, err := kubernetes.NewForConfig(restconfig.PreferProtobuf(loopback))
	if err != nil {
		return controller{}, nil, fmt.Errorf("loopback client: %w", err)
	}
	c.reg.SetResolver(aggregator.EndpointResolver{Client: typed})
	var ctrl *crd.Controller
	inf, stop := crd.StartInformer(client, c.reg, func() {
		if ctrl != nil {
			ctrl.Kick()
		}
	})
	ctrl = crd.NewController(client, inf, c.reg.Serves, log)
	c.ctrl = ctrl
	return controller{"customresourcedefinitions", func(ctx context.Context) error {
		ctrl.Kick()
		return ctrl.Run(ctx)
	}}, stop, nil
}

// ready reports whether the CRDs were loaded (for /readyz).
func (c *customResources) ready() error {
	if !c.reg.Synced() {
		return errors.New("the CustomResourceDefinitions are not loaded yet")
	}
	return nil
}
