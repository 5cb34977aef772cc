package join

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	serverjoin "github.com/orch/orch/server/join"
)

const maxResponseBytes = 1 << 20

// fetchCACerts downloads the server's CA without verifying the server: the
// result is only hashed and compared with the token before it is trusted.
func fetchCACerts(ctx context.Context, serverURL string) ([]byte, error) {
	// #nosec G402 -- the CA is pinned by hash right after this download.
	c := httpClient(&http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}})
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, serverURL+serverjoin.CACertsPath, nil)
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("join: fetching the cluster CA: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("join: reading the cluster CA: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("join: GET %s%s: %s: %s", serverURL, serverjoin.CACertsPath, resp.Status, statusMessage(body))
	}
	return body, nil
}

// requestCertificate makes a key and CSR and asks the server, over TLS
// verified with caPEM, to sign it. It authenticates with the token secret,
// or with the node's current client certificate when secret is "" (renewal).
func requestCertificate(ctx context.Context, o Options, caPEM []byte, secret string, current *tls.Certificate) (*Credentials, error) {
	pool, err := caPool(caPEM)
	if err != nil {
		return nil, err
	}
	keyPEM, csrPEM, err := newKeyAndCSR(o.NodeName)
	if err != nil {
		return nil, err
	}
	servingKeyPEM, servingCSRPEM, err := newKeyAndCSR(o.NodeName)
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(serverjoin.NodeCertificateRequest{NodeName: o.NodeName, CSRPEM: string(csrPEM),
		ServingCSRPEM: string(servingCSRPEM), NodeIPs: ipStrings(o.NodeIPs)})
	tlsCfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if current != nil {
		tlsCfg.Certificates = []tls.Certificate{*current}
	}
	c := httpClient(&http.Transport{TLSClientConfig: tlsCfg})
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.ServerURL+serverjoin.NodeCertificatePath, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("join: requesting a node certificate: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("join: reading the node certificate: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w (%s): %s", ErrRejected, resp.Status, statusMessage(data))
	}
	return decodeIssued(o, data, keyPEM, servingKeyPEM)
}

// decodeIssued checks the server's answer and builds Credentials.
func decodeIssued(o Options, data, keyPEM, servingKeyPEM []byte) (*Credentials, error) {
	var out serverjoin.NodeCertificateResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("join: decoding the node certificate response: %w", err)
	}
	creds := &Credentials{NodeName: o.NodeName, Server: o.ServerURL, CAPEM: []byte(out.CAPEM),
		CertPEM: []byte(out.CertificatePEM), KeyPEM: keyPEM}
	cert, err := checkCredentials(creds, o.NodeName, o.Now())
	if err != nil {
		return nil, fmt.Errorf("join: the server issued an unusable certificate: %w", err)
	}
	creds.NotAfter = cert.NotAfter
	if out.ServingCertificatePEM == "" {
		return nil, fmt.Errorf("join: %w: %s answered without one; it runs an older orch, upgrade the servers first",
			ErrNoServingCertificate, o.ServerURL)
	}
	creds.ServingCertPEM, creds.ServingKeyPEM = []byte(out.ServingCertificatePEM), servingKeyPEM
	if err := checkServing(creds, o.NodeName, o.NodeIPs, o.Now()); err != nil {
		return nil, fmt.Errorf("join: the server issued an unusable serving certificate: %w", err)
	}
	return creds, nil
}

func newKeyAndCSR(nodeName string) (keyPEM, csrPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("join: generating node key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("join: encoding node key: %w", err)
	}
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: serverjoin.NodeUserPrefix + nodeName,
		Organization: []string{serverjoin.NodesGroup}}}
	csr, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		return nil, nil, fmt.Errorf("join: creating certificate request: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr}), nil
}

// statusMessage extracts a metav1.Status message, else the trimmed body.
func statusMessage(body []byte) string {
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err == nil && st.Message != "" {
		return st.Message
	}
	s := string(bytes.TrimSpace(body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
