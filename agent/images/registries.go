package images

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/containerd/containerd/v2/core/remotes/docker"
	"sigs.k8s.io/yaml"
)

// DefaultRegistriesFile is where the agent reads registry configuration.
const DefaultRegistriesFile = "/etc/orch/registries.yaml"

// Registries is k3s's registries.yaml.
type Registries struct {
	Mirrors map[string]Mirror         `json:"mirrors,omitempty"`
	Configs map[string]RegistryConfig `json:"configs,omitempty"`
}

// Mirror lists the endpoints tried, in order, for a registry host ("*"
// matches every host); the upstream registry is tried last.
type Mirror struct {
	Endpoints []string `json:"endpoint,omitempty"`
	// Rewrite is accepted for compatibility but not applied yet.
	Rewrite map[string]string `json:"rewrite,omitempty"`
}

// RegistryConfig holds the auth and TLS settings of one endpoint host.
type RegistryConfig struct {
	Auth *AuthConfig `json:"auth,omitempty"`
	TLS  *TLSConfig  `json:"tls,omitempty"`
}

// AuthConfig is a registry login; Auth is base64("user:password").
type AuthConfig struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	Auth          string `json:"auth,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
}

// TLSConfig is an endpoint's TLS client setup.
type TLSConfig struct {
	CAFile             string `json:"ca_file,omitempty"`
	CertFile           string `json:"cert_file,omitempty"`
	KeyFile            string `json:"key_file,omitempty"`
	InsecureSkipVerify bool   `json:"insecure_skip_verify,omitempty"`
}

// LoadRegistries reads path; a missing file is an empty configuration.
func LoadRegistries(path string) (*Registries, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Registries{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read registries config: %w", err)
	}
	r, err := ParseRegistries(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// ParseRegistries parses and checks a registries.yaml document.
func ParseRegistries(b []byte) (*Registries, error) {
	var r Registries
	if err := yaml.UnmarshalStrict(b, &r); err != nil {
		return nil, fmt.Errorf("parse registries config: %w", err)
	}
	for host, m := range r.Mirrors {
		for i, ep := range m.Endpoints {
			if _, err := parseEndpoint(ep); err != nil {
				return nil, fmt.Errorf("mirrors[%q].endpoint[%d]: %w", host, i, err)
			}
		}
	}
	for host, c := range r.Configs {
		if c.Auth != nil && c.Auth.Auth != "" {
			if _, _, err := c.Auth.credentials(); err != nil {
				return nil, fmt.Errorf("configs[%q].auth.auth: %w", host, err)
			}
		}
	}
	return &r, nil
}

// parseEndpoint turns "https://host:5000/prefix" or "host:5000" into a URL
// whose path ends in /v2.
func parseEndpoint(ep string) (*url.URL, error) {
	if !strings.Contains(ep, "://") {
		ep = "https://" + ep
	}
	u, err := url.Parse(ep)
	if err != nil {
		return nil, fmt.Errorf("invalid endpoint %q: %w", ep, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid endpoint %q: scheme must be http or https", ep)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid endpoint %q: no host", ep)
	}
	p := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(p, "/v2") {
		p += "/v2"
	}
	u.Path = p
	return u, nil
}

func (a *AuthConfig) credentials() (string, string, error) {
	if a.IdentityToken != "" {
		return "", a.IdentityToken, nil
	}
	if a.Auth != "" {
		b, err := base64.StdEncoding.DecodeString(a.Auth)
		if err != nil {
			return "", "", fmt.Errorf("not base64: %w", err)
		}
		user, pass, ok := strings.Cut(string(b), ":")
		if !ok {
			return "", "", errors.New("want base64 of user:password")
		}
		return user, pass, nil
	}
	return a.Username, a.Password, nil
}

// Auth is a login from a pod's imagePullSecrets for the image's registry.
type Auth struct {
	Username, Password string
}

// defaultEndpoint is the upstream registry for host (docker.io's API host
// differs from its name).
func defaultEndpoint(host string) *url.URL {
	if host == "docker.io" {
		host = "registry-1.docker.io"
	}
	return &url.URL{Scheme: "https", Host: host, Path: "/v2"}
}

// Hosts returns the resolver's host list: mirrors first, then upstream.
// auth, when set, is used for endpoints without their own configured auth.
func (r *Registries) Hosts(auth *Auth) docker.RegistryHosts {
	return func(host string) ([]docker.RegistryHost, error) {
		var eps []*url.URL
		m, ok := r.Mirrors[host]
		if !ok {
			m = r.Mirrors["*"]
		}
		for _, ep := range m.Endpoints {
			u, err := parseEndpoint(ep)
			if err != nil {
				return nil, err
			}
			eps = append(eps, u)
		}
		eps = append(eps, defaultEndpoint(host))
		out := make([]docker.RegistryHost, 0, len(eps))
		for i, u := range eps {
			h, err := r.registryHost(u, auth, i == len(eps)-1)
			if err != nil {
				return nil, err
			}
			out = append(out, h)
		}
		return out, nil
	}
}

func (r *Registries) registryHost(u *url.URL, auth *Auth, upstream bool) (docker.RegistryHost, error) {
	cfg := r.Configs[u.Host]
	client, err := httpClient(cfg.TLS)
	if err != nil {
		return docker.RegistryHost{}, fmt.Errorf("registry %s: %w", u.Host, err)
	}
	creds := func(string) (string, string, error) {
		if cfg.Auth != nil {
			return cfg.Auth.credentials()
		}
		if auth != nil {
			return auth.Username, auth.Password, nil
		}
		return "", "", nil
	}
	caps := docker.HostCapabilityPull | docker.HostCapabilityResolve
	if upstream {
		caps |= docker.HostCapabilityPush
	}
	return docker.RegistryHost{
		Client:       client,
		Authorizer:   docker.NewDockerAuthorizer(docker.WithAuthClient(client), docker.WithAuthCreds(creds)),
		Host:         u.Host,
		Scheme:       u.Scheme,
		Path:         u.Path,
		Capabilities: caps,
	}, nil
}

func httpClient(t *TLSConfig) (*http.Client, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if t != nil {
		tc.InsecureSkipVerify = t.InsecureSkipVerify
		if t.CAFile != "" {
			pem, err := os.ReadFile(t.CAFile)
			if err != nil {
				return nil, fmt.Errorf("read ca_file: %w", err)
			}
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("ca_file %s: no certificates", t.CAFile)
			}
			tc.RootCAs = pool
		}
		if t.CertFile != "" || t.KeyFile != "" {
			cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("load client certificate: %w", err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
	}
	tr := docker.DefaultHTTPTransport(tc)
	return &http.Client{Transport: tr, Timeout: 0, CheckRedirect: nil}, nil
}
