package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Bundle holds the paths of the generated files.
type Bundle struct {
	CAFile     string
	ServerCert string
	ServerKey  string
	SAPub      string
	SAKey      string
	Kubeconfig string
}

type keyPair struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
}

// Generate writes a fresh PKI and an admin kubeconfig for serverURL into dir.
func Generate(dir, serverURL string) (*Bundle, error) {
	ca, err := newCert(nil, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "orch-bench-ca"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	})
	if err != nil {
		return nil, fmt.Errorf("ca: %w", err)
	}
	server, err := newCert(ca, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.43.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return nil, fmt.Errorf("server cert: %w", err)
	}
	admin, err := newCert(ca, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "bench-admin", Organization: []string{"system:masters"}},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, fmt.Errorf("admin cert: %w", err)
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("service-account key: %w", err)
	}
	b := &Bundle{
		CAFile:     filepath.Join(dir, "ca.crt"),
		ServerCert: filepath.Join(dir, "server.crt"),
		ServerKey:  filepath.Join(dir, "server.key"),
		SAPub:      filepath.Join(dir, "sa.pub"),
		SAKey:      filepath.Join(dir, "sa.key"),
		Kubeconfig: filepath.Join(dir, "admin.kubeconfig"),
	}
	if err := b.write(ca, server, sa); err != nil {
		return nil, err
	}
	if err := writeKubeconfig(b.Kubeconfig, serverURL, ca, admin); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Bundle) write(ca, server *keyPair, sa *ecdsa.PrivateKey) error {
	saPub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return fmt.Errorf("marshal service-account public key: %w", err)
	}
	files := []struct {
		path  string
		block string
		der   []byte
	}{
		{b.CAFile, "CERTIFICATE", ca.der},
		{b.ServerCert, "CERTIFICATE", server.der},
		{b.SAPub, "PUBLIC KEY", saPub},
	}
	for _, f := range files {
		if err := writePEM(f.path, f.block, f.der); err != nil {
			return err
		}
	}
	if err := writeKey(b.ServerKey, server.key); err != nil {
		return err
	}
	return writeKey(b.SAKey, sa)
}

func newCert(parent *keyPair, tmpl *x509.Certificate) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, fmt.Errorf("serial: %w", err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	signer, signerCert := crypto.Signer(key), tmpl
	if parent != nil {
		signer, signerCert = parent.key, parent.cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signer)
	if err != nil {
		return nil, fmt.Errorf("create certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse certificate: %w", err)
	}
	return &keyPair{cert: cert, der: der, key: key}, nil
}

func writePEM(path, blockType string, der []byte) error {
	data := pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func keyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	data, err := keyPEM(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeKubeconfig(path, serverURL string, ca, admin *keyPair) error {
	key, err := keyPEM(admin.key)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["bench"] = &clientcmdapi.Cluster{
		Server:                   serverURL,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.der}),
	}
	cfg.AuthInfos["bench-admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: admin.der}),
		ClientKeyData:         key,
	}
	cfg.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "bench-admin"}
	cfg.CurrentContext = "bench"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}
