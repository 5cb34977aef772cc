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

// defaultDuration is --cluster-signing-duration's default.
const defaultDuration = 365 * 24 * time.Hour

// SignFunc signs a verified request with the cluster CA.
type SignFunc func(req *x509.CertificateRequest, ttl time.Duration, keyUsage x509.KeyUsage, extUsage []x509.ExtKeyUsage) ([]byte, error)

// Controller signs kube-apiserver-client requests.
type Controller struct {
	kc     *kit.Context
	log    *zap.Logger
	q      kit.Queue
	csrs   certlisters.CertificateSigningRequestLister
	synced cache.InformerSynced
	sign   SignFunc
}

// New registers the controller's informer; sign is the CA.
func New(kc *kit.Context, sign SignFunc) (*Controller, error) {
	if sign == nil {
		return nil, errors.New("csrsigning: no signer")
	}
	inf := kc.Informers.Certificates().V1().CertificateSigningRequests()
	c := &Controller{kc: kc, log: kc.Logger.Named("csrsigning"), q: kit.NewQueue("csrsigning"),
		csrs: inf.Lister(), synced: inf.Informer().HasSynced, sign: sign}
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
		return err
	}
	if !pending(csr) {
		return nil
	}
	upd := csr.DeepCopy()
	pem, err := c.issue(csr)
	if err != nil {
		upd.Status.Conditions = append(upd.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "SignerValidationFailure",
			Message: err.Error(), LastUpdateTime: metav1.Now()})
	} else {
		upd.Status.Certificate = pem
	}
	_, err = c.kc.Client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// pending: this signer's, approved, neither failed nor issued.
func pending(c *certificatesv1.CertificateSigningRequest) bool {
	if c.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName || len(c.Status.Certificate) > 0 {
		return false
	}
	approved := false
	for _, cd := range c.Status.Conditions {
		switch {
		case cd.Type == certificatesv1.CertificateApproved && cd.Status == corev1.ConditionTrue:
			approved = true
		case cd.Type == certificatesv1.CertificateDenied || cd.Type == certificatesv1.CertificateFailed:
			return false
		}
	}
	return approved
}

// issue checks the request for this signer and signs it.
func (c *Controller) issue(csr *certificatesv1.CertificateSigningRequest) ([]byte, error) {
	req, err := certificates.ParseRequest(csr.Spec.Request)
	if err != nil {
		return nil, fmt.Errorf("unable to parse csr %q: %w", csr.Name, err)
	}
	if err := validateClient(req, csr.Spec.Usages); err != nil {
		return nil, err
	}
	ku, ext, err := keyUsages(csr.Spec.Usages)
	if err != nil {
		return nil, err
	}
	ttl := defaultDuration
	if s := csr.Spec.ExpirationSeconds; s != nil && time.Duration(*s)*time.Second < ttl {
		ttl = time.Duration(*s) * time.Second
	}
	return c.sign(req, ttl, ku, ext)
}
