package apiserver

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// kubeletClient is the API server's HTTPS client to node agents: the
// kubelet-client certificate (CN system:apiserver-kubelet-client) and the
// cluster CA that signs the agents' serving certificates.
type kubeletClient struct {
	transport *http.Transport
}

// newKubeletClient returns nil when c is nil (proxied subresources then
// answer 503). HTTP/1.1 only: stream upgrades need it.
func newKubeletClient(c *tls.Config) *kubeletClient {
	if c == nil {
		return nil
	}
	tc := c.Clone()
	tc.NextProtos = []string{"http/1.1"}
	if tc.MinVersion == 0 {
		tc.MinVersion = tls.VersionTLS12
	}
	return &kubeletClient{transport: &http.Transport{
		TLSClientConfig:     tc,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
	}}
}
