package csrsigning

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/registry/certificates"
)

// Certificate lifetimes: --cluster-signing-duration's default, and the
// floor upstream puts under spec.expirationSeconds (twice the backdate).
const (
	defaultDuration = 365 * 24 * time.Hour
	minDuration     = 10 * time.Minute
)

// SignFunc signs a verified request with the cluster CA.
type SignFunc func(req *x509.CertificateRequest, ttl time.Duration, keyUsage x509.KeyUsage, extUsage []x509.ExtKeyUsage) ([]byte, error)

// Controller signs the requests of the signers it serves.
type Controller struct {
	kc     *kit.Context
	log    *zap.Logger
	q      kit.Queue
	csrs   certlisters.CertificateSigningRequestLister
	synced cache.InformerSynced
	sign   SignFunc
	checks map[string]checkFunc
}

// New registers the controller's informer; sign is the CA.
func New(kc *kit.Context, sign SignFunc) (*Controller, error) {
	if sign == nil {
		return nil, errors.New("csrsigning: no signer")
	}
	inf := kc.Informers.Certificates().V1().CertificateSigningRequests()
	c := &Controller{kc: kc, log: kc.Logger.Named("csrsigning"), q: kc.NewQueue("csrsigning"),
		csrs: inf.Lister(), synced: inf.Informer().HasSynced, sign: sign, checks: signers()}
	add := func(o any) {
		if k, ok := kit.Key(o); ok {
			c.q.Add(k)
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: add, UpdateFunc: func(_, o any) { add(o) },
	}); err != nil {
		return nil, fmt.Errorf("csr handler: %w", err)
	}
	return c, nil
}

// Run signs until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced) {
		return nil
	}
	kit.RunWorkers(ctx, c.q, 1, c.sync, c.log)
	return nil
}

func (c *Controller) sync(ctx context.Context, name string) error {
	csr, err := c.csrs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get csr %q: %w", name, err)
	}
	check, ours := c.checks[csr.Spec.SignerName]
	if !ours || !pending(csr) {
		return nil
	}
	req, err := certificates.ParseRequest(csr.Spec.Request)
	if err != nil {
		return fmt.Errorf("unable to parse csr %q: %w", name, err)
	}
	upd := csr.DeepCopy()
	if err := check(req, csr.Spec.Usages); err != nil {
		upd.Status.Conditions = append(upd.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "SignerValidationFailure",
			Message: err.Error(), LastUpdateTime: metav1.Now()})
		return c.updateStatus(ctx, upd, "adding the failure condition")
	}
	if upd.Status.Certificate, err = c.issue(req, csr); err != nil {
		return fmt.Errorf("signing csr %q: %w", name, err)
	}
	return c.updateStatus(ctx, upd, "storing the certificate")
}

func (c *Controller) updateStatus(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, what string) error {
	_, err := c.kc.Client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s of csr %q: %w", what, csr.Name, err)
	}
	return nil
}

// pending: approved (and not denied), neither failed nor issued.
func pending(c *certificatesv1.CertificateSigningRequest) bool {
	if len(c.Status.Certificate) > 0 {
		return false
	}
	approved := false
	for _, cd := range c.Status.Conditions {
		switch {
		case cd.Type == certificatesv1.CertificateApproved && cd.Status == corev1.ConditionTrue:
			approved = true
		case cd.Type == certificatesv1.CertificateDenied, cd.Type == certificatesv1.CertificateFailed && cd.Status == corev1.ConditionTrue:
			return false
		}
	}
	return approved
}

// issue signs req with the usages and lifetime csr asks for.
func (c *Controller) issue(req *x509.CertificateRequest, csr *certificatesv1.CertificateSigningRequest) ([]byte, error) {
	ku, ext, err := keyUsages(csr.Spec.Usages)
	if err != nil {
		return nil, err
	}
	return c.sign(req, duration(csr.Spec.ExpirationSeconds), ku, ext)
}

// duration is the lifetime of a certificate: spec.expirationSeconds
// within [10 minutes, a year], a year without it (upstream's signer with
// --cluster-signing-duration's default). The CA's own end caps it too.
func duration(expirationSeconds *int32) time.Duration {
	if expirationSeconds == nil {
		return defaultDuration
	}
	d := time.Duration(*expirationSeconds) * time.Second
	switch {
	case d > defaultDuration:
		return defaultDuration
	case d < minDuration:
		return minDuration
	}
	return d
}
