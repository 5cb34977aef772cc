package csrsigning

import (
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// checkFunc is a signer's check of an approved request (upstream's
// isRequestForSignerFn): an error marks the request Failed.
type checkFunc func(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error

// signers are the signer names this controller serves and their checks,
// kube-controller-manager's csrsigning signers over the cluster CA. The
// kubernetes.io/legacy-unknown signer is not served (v1 refuses it anyway).
func signers() map[string]checkFunc {
	return map[string]checkFunc{
		certificatesv1.KubeAPIServerClientSignerName: func(_ *x509.CertificateRequest, u []certificatesv1.KeyUsage) error {
			return validateClientUsages(u)
		},
		certificatesv1.KubeAPIServerClientKubeletSignerName: validateKubeletClient,
		certificatesv1.KubeletServingSignerName:             validateKubeletServing,
	}
}

// validateClientUsages is upstream's validAPIServerClientUsages: client
// auth, and nothing beyond digital signature and key encipherment.
func validateClientUsages(usages []certificatesv1.KeyUsage) error {
	client := false
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageClientAuth:
			client = true
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment:
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !client {
		return fmt.Errorf("missing required usage for client certificate: %s", certificatesv1.UsageClientAuth)
	}
	return nil
}

// usagesFor: the usages a kubelet asks for, with or without key
// encipherment (which only RSA keys use).
func usagesFor(ext certificatesv1.KeyUsage) []sets.Set[string] {
	return []sets.Set[string]{
		sets.New(string(certificatesv1.UsageDigitalSignature), string(certificatesv1.UsageKeyEncipherment), string(ext)),
		sets.New(string(certificatesv1.UsageDigitalSignature), string(ext)),
	}
}

func matchUsages(usages []certificatesv1.KeyUsage, ext certificatesv1.KeyUsage) error {
	got := sets.New[string]()
	for _, u := range usages {
		got.Insert(string(u))
	}
	want := usagesFor(ext)
	if !slices.ContainsFunc(want, got.Equal) {
		return fmt.Errorf("usages did not match %v", sets.List(want[0]))
	}
	return nil
}

// validateKubeletClient is upstream's ValidateKubeletClientCSR.
func validateKubeletClient(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	switch {
	case !slices.Equal(req.Subject.Organization, []string{"system:nodes"}):
		return errors.New("subject organization is not system:nodes")
	case len(req.DNSNames) > 0:
		return errors.New("DNS subjectAltNames are not allowed")
	case len(req.EmailAddresses) > 0:
		return errors.New("Email subjectAltNames are not allowed")
	case len(req.IPAddresses) > 0:
		return errors.New("IP subjectAltNames are not allowed")
	case len(req.URIs) > 0:
		return errors.New("URI subjectAltNames are not allowed")
	case !strings.HasPrefix(req.Subject.CommonName, "system:node:"):
		return errors.New("subject common name does not begin with system:node:")
	}
	return matchUsages(usages, certificatesv1.UsageClientAuth)
}

// validateKubeletServing is upstream's ValidateKubeletServingCSR.
func validateKubeletServing(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	switch {
	case !slices.Equal(req.Subject.Organization, []string{"system:nodes"}):
		return errors.New("subject organization is not system:nodes")
	case len(req.DNSNames) == 0 && len(req.IPAddresses) == 0:
		return errors.New("DNS or IP subjectAltName is required")
	case len(req.EmailAddresses) > 0:
		return errors.New("Email subjectAltNames are not allowed")
	case len(req.URIs) > 0:
		return errors.New("URI subjectAltNames are not allowed")
	}
	if err := matchUsages(usages, certificatesv1.UsageServerAuth); err != nil {
		return err
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errors.New("subject common name does not begin with system:node:")
	}
	return nil
}
