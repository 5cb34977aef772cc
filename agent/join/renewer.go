package join

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/orch/orch/internal/pki"
)

// Renewal of a running node's certificates, like the server's
// (internal/pki): every RenewCheck the node client and serving
// certificates are looked at, and when either is within RenewWindow of
// expiry both are requested again from the server, authenticated by the
// current client certificate (no token: the one the node joined with may
// have been a bootstrap token that has expired). The new files replace
// the old ones; the agent's client-go transport reloads node.crt/node.key
// and its kubelet API serves serving.crt through ServingCertificateFrom.
const (
	RenewCheck  = 12 * time.Hour
	RenewWindow = 90 * 24 * time.Hour
)

// dueForRenewal is the renewal decision at now.
func dueForRenewal(c *Credentials, now time.Time, window time.Duration) bool {
	return c.NotAfter.Sub(now) < window || c.ServingNotAfter.Sub(now) < window
}

// Renew asks o.ServerURL for new certificates for creds's node, presenting
// creds's client certificate, and stores them in o.Dir. o needs ServerURL,
// NodeName and Dir; without o.NodeIPs the node IPs stay those of creds.
func Renew(ctx context.Context, o Options, creds *Credentials) (*Credentials, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ServerURL == "" || o.NodeName == "" || o.Dir == "" {
		return nil, errors.New("join: renewing needs the server URL, the node name and the credentials directory")
	}
	current, err := tls.X509KeyPair(creds.CertPEM, creds.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("join: the current node certificate: %w", err)
	}
	if len(o.NodeIPs) == 0 {
		o.NodeIPs = creds.NodeIPs
	}
	next, err := requestCertificate(ctx, o, creds.CAPEM, "", &current)
	if err != nil {
		return nil, err
	}
	if err := store(o, next); err != nil {
		return nil, err
	}
	return next, nil
}

// KeepRenewed renews creds (see Renew) whenever a check every RenewCheck
// finds them within RenewWindow of expiry, until ctx ends. A failure is
// logged and tried again at the next check.
func KeepRenewed(ctx context.Context, o Options, creds *Credentials) {
	r := &renewLoop{o: o, creds: creds, every: RenewCheck, window: RenewWindow}
	r.run(ctx)
}

// renewLoop is KeepRenewed with its intervals as fields (a seam for tests).
type renewLoop struct {
	o      Options
	creds  *Credentials
	every  time.Duration
	window time.Duration
}

func (r *renewLoop) run(ctx context.Context) {
	log := r.o.Logger
	if log == nil {
		log = zap.NewNop()
	}
	if r.o.Now == nil {
		r.o.Now = time.Now
	}
	t := time.NewTimer(r.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if dueForRenewal(r.creds, r.o.Now(), r.window) {
			next, err := Renew(ctx, r.o, r.creds)
			if err != nil {
				log.Error("renewing the node certificates", zap.Error(err))
			} else {
				log.Info("renewed the node certificates", zap.Time("notAfter", next.NotAfter), zap.Time("servingNotAfter", next.ServingNotAfter))
				r.creds = next
			}
		}
		t.Reset(r.every)
	}
}

// ServingCertificateFrom is a tls.Config.GetCertificate serving the
// certificate in certPath/keyPath, read again whenever the files change
// (a renewal writes new ones), so the listener never restarts.
func ServingCertificateFrom(certPath, keyPath string) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	var (
		mu   sync.Mutex
		cur  *tls.Certificate
		seen time.Time
	)
	return func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		mu.Lock()
		defer mu.Unlock()
		fi, err := os.Stat(certPath)
		if err != nil {
			if cur != nil {
				return cur, nil
			}
			return nil, fmt.Errorf("join: serving certificate: %w", err)
		}
		if cur != nil && fi.ModTime().Equal(seen) {
			return cur, nil
		}
		pair, err := tls.LoadX509KeyPair(certPath, keyPath)
		if err != nil {
			if cur != nil {
				return cur, nil // mid-renewal (key written, certificate not yet): keep the old pair
			}
			return nil, fmt.Errorf("join: serving certificate: %w", err)
		}
		cur, seen = &pair, fi.ModTime()
		return cur, nil
	}
}

// renewable returns the stored credentials when they can still
// authenticate a renewal (complete, of the pinned CA, for the node, valid
// now) though JoinWithOptions will not reuse them as they are (close to
// expiry, other node IPs); nil otherwise.
func renewable(o Options, pinnedHash string) *Credentials {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(o.Dir, name))
		if err != nil {
			return nil
		}
		return b
	}
	c := &Credentials{NodeName: o.NodeName, Server: o.ServerURL, CAPEM: read(CAFile), CertPEM: read(CertFile), KeyPEM: read(KeyFile)}
	if c.CAPEM == nil || c.CertPEM == nil || c.KeyPEM == nil || (pinnedHash != "" && pki.CAHash(c.CAPEM) != pinnedHash) {
		return nil
	}
	cert, err := checkCredentials(c, o.NodeName, o.Now())
	if err != nil {
		return nil
	}
	c.NotAfter = cert.NotAfter
	return c
}
