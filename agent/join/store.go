package join

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/orch/orch/internal/pki"
	serverjoin "github.com/orch/orch/server/join"
)

// loadStored returns stored credentials that can be reused, or nil and the
// reason for a new join.
func loadStored(o Options, pinnedHash string) (*Credentials, string) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(o.Dir, name))
		if err != nil {
			return nil
		}
		return b
	}
	creds := &Credentials{NodeName: o.NodeName, Server: o.ServerURL, CAPEM: read(CAFile), CertPEM: read(CertFile),
		KeyPEM: read(KeyFile), KubeconfigPath: filepath.Join(o.Dir, KubeconfigFile), Reused: true}
	if creds.CAPEM == nil || creds.CertPEM == nil || creds.KeyPEM == nil {
		return nil, "no stored credentials"
	}
	if _, err := os.Stat(creds.KubeconfigPath); err != nil {
		return nil, "no stored kubeconfig"
	}
	if pinnedHash != "" && pki.CAHash(creds.CAPEM) != pinnedHash {
		return nil, "stored CA is not the one the token pins"
	}
	cert, err := checkCredentials(creds, o.NodeName, o.Now())
	if err != nil {
		return nil, "stored credentials unusable: " + err.Error()
	}
	if o.Now().Add(o.RenewBefore).After(cert.NotAfter) {
		return nil, fmt.Sprintf("stored certificate expires at %s", cert.NotAfter.UTC().Format(time.RFC3339))
	}
	creds.NotAfter = cert.NotAfter
	if reason := loadStoredServing(o, creds, read); reason != "" {
		return nil, reason
	}
	return creds, ""
}

// checkCredentials verifies that the certificate matches the key, chains to
// the CA, names the node and is valid at now.
func checkCredentials(c *Credentials, nodeName string, now time.Time) (*x509.Certificate, error) {
	pair, err := tls.X509KeyPair(c.CertPEM, c.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("certificate and key: %w", err)
	}
	if _, ok := pair.PrivateKey.(*ecdsa.PrivateKey); !ok {
		return nil, errors.New("node key is not ECDSA")
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("parse certificate: %w", err)
	}
	pool, err := caPool(c.CAPEM)
	if err != nil {
		return nil, fmt.Errorf("CA: %w", err)
	}
	_, err = cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return nil, fmt.Errorf("certificate does not verify against the CA: %w", err)
	}
	if want := serverjoin.NodeUserPrefix + nodeName; cert.Subject.CommonName != want {
		return nil, fmt.Errorf("certificate is for %q, want %q", cert.Subject.CommonName, want)
	}
	return cert, nil
}

// store writes the credentials and then the kubeconfig. A crash part way
// leaves no kubeconfig, which makes the next start join again.
func store(o Options, c *Credentials) error {
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return fmt.Errorf("join: creating %s: %w", o.Dir, err)
	}
	c.KubeconfigPath = filepath.Join(o.Dir, KubeconfigFile)
	c.ServingCertPath, c.ServingKeyPath = filepath.Join(o.Dir, ServingCertFile), filepath.Join(o.Dir, ServingKeyFile)
	if err := os.Remove(c.KubeconfigPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("join: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{{CAFile, c.CAPEM, 0o644}, {KeyFile, c.KeyPEM, 0o600}, {CertFile, c.CertPEM, 0o644},
		{ServingKeyFile, c.ServingKeyPEM, 0o600}, {ServingCertFile, c.ServingCertPEM, 0o600}} {
		if err := writeFileAtomic(filepath.Join(o.Dir, f.name), f.data, f.mode); err != nil {
			return fmt.Errorf("join: %w", err)
		}
	}
	if err := pki.WriteKubeconfig(c.KubeconfigPath, 0o600, c.Server, c.CAPEM, c.CertPEM, c.KeyPEM); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	return nil
}

// ensureKubeconfigServer rewrites a reused kubeconfig whose server URL is
// not the one the agent was started with.
func ensureKubeconfigServer(c *Credentials) error {
	kc, err := clientcmd.LoadFromFile(c.KubeconfigPath)
	if err == nil {
		if cl, ok := kc.Clusters[pki.KubeconfigName]; ok && cl.Server == c.Server {
			return nil
		}
	}
	if err := pki.WriteKubeconfig(c.KubeconfigPath, 0o600, c.Server, c.CAPEM, c.CertPEM, c.KeyPEM); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	return nil
}

// writeFileAtomic writes data to a temp file, fsyncs and renames it.
func writeFileAtomic(path string, data []byte, mode os.FileMode) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(mode); err == nil {
		if _, err = f.Write(data); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// parseCerts decodes all CERTIFICATE blocks of a PEM bundle.
func parseCerts(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var blk *pem.Block
		blk, data = pem.Decode(data)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse certificate: %w", err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return out, nil
}
