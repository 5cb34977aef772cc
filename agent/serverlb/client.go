package serverlb

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"go.uber.org/zap"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// ServerName is the name every API server's certificate carries (a SAN of
// the kubernetes Service), checked whichever server the balancer dials.
const ServerName = "kubernetes"

// checkInterval is how often the current server's /readyz is checked
// while there is another server to fail over to.
const checkInterval = 5 * time.Second

// Wire makes rc dial through a new Balancer that starts at rc.Host.
func Wire(rc *rest.Config, log *zap.Logger) (*Balancer, error) {
	u, err := url.Parse(rc.Host)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("API server URL %q: %v", rc.Host, err)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	b := New(host, log.Named("serverlb"))
	rc.Dial = b.DialContext
	if rc.TLSClientConfig.ServerName == "" {
		rc.TLSClientConfig.ServerName = ServerName
	}
	return b, nil
}

// Start follows the kubernetes Service's EndpointSlice and checks the
// current server's readiness with rc's credentials until ctx ends.
func (b *Balancer) Start(ctx context.Context, rc *rest.Config, client kubernetes.Interface) error {
	ready, err := readyCheck(rc)
	if err != nil {
		return err
	}
	go b.Run(ctx, checkInterval, ready)
	go b.follow(ctx, client)
	return nil
}

// readyCheck GETs /readyz of one server with rc's TLS credentials.
func readyCheck(rc *rest.Config) (func(ctx context.Context, addr string) error, error) {
	tlsCfg, err := rest.TLSConfigFor(rc)
	if err != nil {
		return nil, fmt.Errorf("API server readiness check: %w", err)
	}
	if tlsCfg == nil {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg, IdleConnTimeout: 30 * time.Second}}
	return func(ctx context.Context, addr string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/readyz", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz answered %s", resp.Status)
		}
		return nil
	}, nil
}

// follow keeps the server list equal to the kubernetes EndpointSlice.
func (b *Balancer) follow(ctx context.Context, client kubernetes.Interface) {
	sel := discoveryv1.LabelServiceName + "=kubernetes"
	slices := client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = sel
			return slices.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return slices.Watch(ctx, o)
		},
	}
	update := func(obj interface{}) {
		if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
			b.SetServers(sliceAddrs(s))
		}
	}
	_, ctl := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: lw, ObjectType: &discoveryv1.EndpointSlice{},
		Handler: cache.ResourceEventHandlerFuncs{AddFunc: update, UpdateFunc: func(_, n interface{}) { update(n) }}})
	ctl.RunWithContext(ctx)
}

// sliceAddrs are the ready endpoints of s as host:port.
func sliceAddrs(s *discoveryv1.EndpointSlice) []string {
	port := 443
	for _, p := range s.Ports {
		if p.Port != nil && (p.Name == nil || *p.Name == "https") {
			port = int(*p.Port)
		}
	}
	var addrs []string
	for _, e := range s.Endpoints {
		if e.Conditions.Ready != nil && !*e.Conditions.Ready {
			continue
		}
		for _, a := range e.Addresses {
			addrs = append(addrs, net.JoinHostPort(a, strconv.Itoa(port)))
		}
	}
	return addrs
}
