package policy

import (
	"context"
	"fmt"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/rest"
)

// PathsFunc lists the API server's OpenAPI v3 documents in process: the
// server-relative URL (with its hash) of each, by name ("apis/apps/v1").
type PathsFunc func() (map[string]string, error)

// withOpenAPI is a clientset whose discovery lists the OpenAPI v3
// documents through paths instead of a GET of /openapi/v3. Upstream's
// MutatingAdmissionPolicy plug-in polls that index every 5 s for its type
// converters; in process the poll costs a map instead of a request, an
// encode and a decode. The documents themselves are still fetched over
// the loopback, when a type converter needs one.
type withOpenAPI struct {
	kubernetes.Interface
	paths PathsFunc
}

func (c withOpenAPI) Discovery() discovery.DiscoveryInterfaces {
	d := c.Interface.Discovery()
	return openAPIDiscovery{DiscoveryInterfaces: d, client: inProcessOpenAPI{paths: c.paths, rest: d.RESTClient()}}
}

type openAPIDiscovery struct {
	discovery.DiscoveryInterfaces
	client inProcessOpenAPI
}

func (d openAPIDiscovery) OpenAPIV3() openapi.Client { return d.client }

func (d openAPIDiscovery) OpenAPIV3WithContext(context.Context) openapi.ClientWithContext {
	return openapi.ToClientWithContext(d.client)
}

// inProcessOpenAPI is client-go's openapi.Client over a PathsFunc.
type inProcessOpenAPI struct {
	paths PathsFunc
	rest  rest.Interface
}

func (c inProcessOpenAPI) Paths() (map[string]openapi.GroupVersion, error) {
	urls, err := c.paths()
	if err != nil {
		return nil, fmt.Errorf("openapi v3 paths: %w", err)
	}
	out := make(map[string]openapi.GroupVersion, len(urls))
	for name, u := range urls {
		out[name] = groupVersion{url: u, rest: c.rest}
	}
	return out, nil
}

// groupVersion is one document: its URL, fetched on demand.
type groupVersion struct {
	url  string
	rest rest.Interface
}

func (g groupVersion) ServerRelativeURL() string { return g.url }

func (g groupVersion) Schema(contentType string) ([]byte, error) {
	return g.rest.Get().RequestURI(g.url).SetHeader("Accept", contentType).Do(context.Background()).Raw()
}
