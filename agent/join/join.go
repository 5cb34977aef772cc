package join

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/orch/orch/internal/pki"
)

// Files written in the credentials directory.
const (
	CAFile         = "ca.crt"
	CertFile       = "node.crt"
	KeyFile        = "node.key"
	KubeconfigFile = "kubeconfig.yaml"
	// ServingCertFile and ServingKeyFile hold the kubelet-API serving
	// certificate (ServerAuth, SANs <node name> and Options.NodeIPs); both 0600.
	ServingCertFile = "serving.crt"
	ServingKeyFile  = "serving.key"
)

// DefaultRenewBefore is how long before expiry stored credentials are
// replaced by a new join.
const DefaultRenewBefore = 24 * time.Hour

var (
	// ErrCAMismatch means the server's CA is not the one the token pins.
	ErrCAMismatch = errors.New("the server's CA does not match the token")
	// ErrUnpinnedToken means a bare secret was given without a CA file.
	ErrUnpinnedToken = errors.New("the join token does not pin the cluster CA")
	// ErrRejected means the server refused the request (e.g. wrong secret).
	ErrRejected = errors.New("the server refused the join request")
	// ErrNoServingCertificate means there is no serving certificate: the
	// server is too old to issue one, or the Credentials lack it.
	ErrNoServingCertificate = errors.New("no node serving certificate")
	// ErrInvalidNodeIP means Options.NodeIPs holds an unusable address.
	ErrInvalidNodeIP = errors.New("invalid node IP")
)

// Options configure JoinWithOptions.
type Options struct {
	ServerURL string // https://host:6443
	Token     string // K10<ca sha256>::server:<secret>, or a bare secret with CAFile
	NodeName  string
	Dir       string // where credentials are kept (created 0700)
	// CAFile pins the CA when Token is a bare secret (like k3s --ca-file).
	CAFile      string
	RenewBefore time.Duration // 0 = DefaultRenewBefore
	Logger      *zap.Logger
	// Now is the clock for expiry checks; nil = time.Now.
	Now func() time.Time
	// NodeIPs are put into the serving certificate as IP SANs (the
	// addresses the API server dials, e.g. the Node's InternalIP). A stored
	// serving certificate with other IPs makes the agent join again.
	// Unspecified and multicast addresses are refused; nil = DNS SAN only.
	NodeIPs []net.IP
}

// Credentials are a node's identity, as stored in Dir.
type Credentials struct {
	NodeName       string
	Server         string
	CAPEM          []byte
	CertPEM        []byte
	KeyPEM         []byte
	NotAfter       time.Time
	KubeconfigPath string
	// Reused is true when stored credentials were used without a new join.
	Reused bool

	// ServingCertPEM and ServingKeyPEM are the kubelet-API serving
	// certificate and its key (never log the key); see ServingTLS.
	ServingCertPEM []byte
	ServingKeyPEM  []byte
	// ServingCertPath and ServingKeyPath are where they are stored.
	ServingCertPath string
	ServingKeyPath  string
	// ServingNotAfter is the expiry of the serving certificate.
	ServingNotAfter time.Time
	// NodeIPs are the IP SANs of the serving certificate.
	NodeIPs []net.IP
}

// Join is JoinWithOptions with the common options.
func Join(ctx context.Context, serverURL, token, nodeName, dir string, log *zap.Logger) (*Credentials, error) {
	return JoinWithOptions(ctx, Options{ServerURL: serverURL, Token: token, NodeName: nodeName, Dir: dir, Logger: log})
}

// JoinWithOptions returns the stored credentials in o.Dir when they are
// complete, signed by the pinned CA, for o.NodeName and not about to
// expire; else it joins the cluster at o.ServerURL and stores new ones.
func JoinWithOptions(ctx context.Context, o Options) (*Credentials, error) {
	o, pinnedHash, secret, err := o.prepare()
	if err != nil {
		return nil, err
	}
	log := o.Logger.Named("join")
	if creds, reason := loadStored(o, pinnedHash); creds != nil {
		log.Info("using stored node credentials", zap.String("node", o.NodeName), zap.Time("notAfter", creds.NotAfter))
		return creds, ensureKubeconfigServer(creds)
	} else if reason != "" {
		log.Info("joining the cluster", zap.String("server", o.ServerURL), zap.String("node", o.NodeName), zap.String("reason", reason))
	}
	if stored := renewable(o, pinnedHash); stored != nil {
		creds, err := Renew(ctx, o, stored)
		if err == nil {
			log.Info("renewed the node credentials with the node certificate", zap.String("node", o.NodeName),
				zap.Time("notAfter", creds.NotAfter))
			return creds, nil
		}
		log.Info("renewing with the node certificate failed; joining with the token", zap.Error(err))
	}
	caPEM, err := pinnedCA(ctx, o, pinnedHash)
	if err != nil {
		return nil, err
	}
	creds, err := requestCertificate(ctx, o, caPEM, secret, nil)
	if err != nil {
		return nil, err
	}
	if err := store(o, creds); err != nil {
		return nil, err
	}
	log.Info("joined the cluster", zap.String("node", o.NodeName), zap.Time("notAfter", creds.NotAfter),
		zap.Strings("nodeIPs", ipStrings(creds.NodeIPs)))
	return creds, nil
}

// prepare checks and defaults the options and splits the token.
func (o Options) prepare() (Options, string, string, error) {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RenewBefore == 0 {
		o.RenewBefore = DefaultRenewBefore
	}
	o.ServerURL = strings.TrimRight(o.ServerURL, "/")
	if !strings.HasPrefix(o.ServerURL, "https://") {
		return o, "", "", fmt.Errorf("join: server URL %q must start with https://", o.ServerURL)
	}
	if o.NodeName == "" || o.Dir == "" {
		return o, "", "", errors.New("join: node name and credentials directory are required")
	}
	ips, err := canonicalNodeIPs(o.NodeIPs)
	if err != nil {
		return o, "", "", fmt.Errorf("join: %w", err)
	}
	o.NodeIPs = ips
	hash, secret, err := pki.ParseToken(o.Token)
	if err != nil {
		return o, "", "", fmt.Errorf("join: %w", err)
	}
	if hash == "" && o.CAFile == "" {
		return o, "", "", fmt.Errorf("join: %w: use the full K10... token from <data-dir>/server/token of a server, "+
			"or give the cluster CA file together with the bare secret", ErrUnpinnedToken)
	}
	return o, hash, secret, nil
}

// pinnedCA returns the CA PEM to trust: from CAFile, or fetched from the
// server and checked against the token's hash.
func pinnedCA(ctx context.Context, o Options, hash string) ([]byte, error) {
	if hash == "" {
		caPEM, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("join: reading CA file: %w", err)
		}
		if _, err := caPool(caPEM); err != nil {
			return nil, fmt.Errorf("join: CA file %s: %w", o.CAFile, err)
		}
		return caPEM, nil
	}
	caPEM, err := fetchCACerts(ctx, o.ServerURL)
	if err != nil {
		return nil, err
	}
	if got := pki.CAHash(caPEM); got != hash {
		return nil, fmt.Errorf("%w: %s serves a CA with sha256 %s, the token pins %s; "+
			"check the server URL and the token", ErrCAMismatch, o.ServerURL, got, hash)
	}
	if _, err := caPool(caPEM); err != nil {
		return nil, fmt.Errorf("join: CA from %s: %w", o.ServerURL, err)
	}
	return caPEM, nil
}

// caPool parses a CA PEM into a pool (first certificate must be a CA).
func caPool(caPEM []byte) (*x509.CertPool, error) {
	certs, err := parseCerts(caPEM)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		if !c.IsCA {
			return nil, fmt.Errorf("certificate %q is not a CA", c.Subject.CommonName)
		}
		pool.AddCert(c)
	}
	return pool, nil
}

// httpClient is a short-lived client for one join step.
func httpClient(tr *http.Transport) *http.Client {
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// PinnedCA fetches the cluster CA from serverURL and checks it against the
// full K10 token's hash; it returns the CA PEM and the token's secret. A
// joining server uses it before it asks for the cluster's shared secrets.
func PinnedCA(ctx context.Context, serverURL, token string) (caPEM []byte, secret string, err error) {
	hash, secret, err := pki.ParseToken(token)
	if err != nil {
		return nil, "", fmt.Errorf("join: %w", err)
	}
	if hash == "" {
		return nil, "", fmt.Errorf("join: %w: use the full K10... token from <data-dir>/server/token of a server", ErrUnpinnedToken)
	}
	caPEM, err = pinnedCA(ctx, Options{ServerURL: strings.TrimRight(serverURL, "/")}, hash)
	return caPEM, secret, err
}
