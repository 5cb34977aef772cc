package certs

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// request makes a key and creates the PodCertificateRequest for it, as
// upstream's kubelet: generateName req-, owned by the pod, naming the
// pod, its ServiceAccount and this node with their UIDs, and an empty
// PKCS#10 request signed with the key as proof of possession.
func (m *PodCerts) request(ctx context.Context, pod *corev1.Pod, proj *corev1.PodCertificateProjection) (*pendingRequest, error) {
	saName := pod.Spec.ServiceAccountName
	sa, err := m.cfg.Client.CoreV1().ServiceAccounts(pod.Namespace).Get(ctx, saName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("while fetching service account: %w", err)
	}
	node, err := m.cfg.Client.CoreV1().Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("while getting node object: %w", err)
	}
	key, stub, err := newKeyAndStub(proj.KeyType)
	if err != nil {
		return nil, fmt.Errorf("while generating keypair: %w", err)
	}
	keyPEM, err := pemKey(key)
	if err != nil {
		return nil, err
	}
	req := &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, GenerateName: "req-",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}}},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: proj.SignerName, PodName: pod.Name, PodUID: pod.UID,
			ServiceAccountName: saName, ServiceAccountUID: sa.UID,
			NodeName: types.NodeName(m.cfg.NodeName), NodeUID: node.UID,
			MaxExpirationSeconds: proj.MaxExpirationSeconds, StubPKCS10Request: stub,
			UnverifiedUserAnnotations: proj.UserAnnotations,
		},
	}
	req, err = m.cfg.Client.CertificatesV1().PodCertificateRequests(pod.Namespace).Create(ctx, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("while creating PodCertificateRequest: %w", err)
	}
	return &pendingRequest{name: req.Name, key: keyPEM,
		abandonAt: req.CreationTimestamp.Add(assumeDeleted + m.cfg.Jitter())}, nil
}

// newKeyAndStub makes a private key of keyType and the empty PKCS#10
// request it signs.
func newKeyAndStub(keyType string) (crypto.Signer, []byte, error) {
	var (
		key crypto.Signer
		err error
	)
	switch keyType {
	case "RSA3072":
		key, err = rsa.GenerateKey(rand.Reader, 3072)
	case "RSA4096":
		key, err = rsa.GenerateKey(rand.Reader, 4096)
	case "ECDSAP256":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ECDSAP384":
		key, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ECDSAP521":
		key, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "ED25519":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, nil, fmt.Errorf("unknown key type %q", keyType)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("generating a %s key: %w", keyType, err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		return nil, nil, fmt.Errorf("while generating stub PKCS#10 request: %w", err)
	}
	return key, stub, nil
}

// pemKey is the key as a PKCS#8 "PRIVATE KEY" block.
func pemKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("while marshaling key to PKCS#8: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// cleanChain keeps the PEM blocks of chain as header-less CERTIFICATE
// blocks, dropping whatever lies between them.
func cleanChain(chain string) []byte {
	var out bytes.Buffer
	rest := []byte(chain)
	for {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			return out.Bytes()
		}
		out.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: blk.Bytes}))
	}
}
