package server

import (
	"fmt"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/internal/restconfig"
	"github.com/orch/orch/server/aggregator"
	"github.com/orch/orch/server/apiserver"
	"github.com/orch/orch/server/controllers/apiservice"
)

// newAggregationProxy is the proxy to aggregated API servers, presenting
// the front-proxy client certificate; attachResolver completes it.
func newAggregationProxy(bundle *pki.Bundle, log *zap.Logger) (*aggregator.Proxy, error) {
	cert, err := bundle.FrontProxyClientCert()
	if err != nil {
		return nil, fmt.Errorf("front-proxy client certificate: %w", err)
	}
	return &aggregator.Proxy{ClientCert: cert, GetClientCert: bundle.FrontProxyClientCertificate(), Log: log.Named("aggregator")}, nil
}

// attachResolver resolves APIService Services through EndpointSlices read
// over the API server's loopback.
func attachResolver(p *aggregator.Proxy, api *apiserver.Server) error {
	cs, err := kubernetes.NewForConfig(restconfig.PreferProtobuf(&rest.Config{Host: "http://orch-loopback", Transport: api.LoopbackTransport(), QPS: -1}))
	if err != nil {
		return fmt.Errorf("aggregator loopback client: %w", err)
	}
	p.Resolver = aggregator.EndpointResolver{Client: cs}
	return nil
}

// availabilityController is the leader-only APIService availability loop.
func availabilityController(bundle *pki.Bundle, api *apiserver.Server, log *zap.Logger) (controller, error) {
	p, err := newAggregationProxy(bundle, log)
	if err != nil {
		return controller{}, err
	}
	if err := attachResolver(p, api); err != nil {
		return controller{}, err
	}
	rc, err := rest.RESTClientFor(&rest.Config{Host: "http://orch-loopback", Transport: api.LoopbackTransport(), QPS: -1,
		ContentConfig: rest.ContentConfig{NegotiatedSerializer: scheme.Codecs.WithoutConversion(), GroupVersion: &schema.GroupVersion{Version: "v1"}}})
	if err != nil {
		return controller{}, fmt.Errorf("aggregator REST client: %w", err)
	}
	c := &apiservice.Controller{Client: rc, Proxy: p, Log: log.Named("apiservice-availability")}
	return controller{"APIService availability", c.Run}, nil
}
