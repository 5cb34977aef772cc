package csrcleaner

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	"go.uber.org/zap"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// Upstream's retention periods.
const (
	approvedExpiration = time.Hour
	deniedExpiration   = time.Hour
	pendingExpiration  = 24 * time.Hour
)

// Controller deletes CSRs past their deadline.
type Controller struct {
	kc     *kit.Context
	log    *zap.Logger
	q      kit.Queue
	csrs   certlisters.CertificateSigningRequestLister
	synced cache.InformerSynced
	now    func() time.Time
}

// New registers the controller's handler on the shared CSR informer.
func New(kc *kit.Context) (*Controller, error) {
	inf := kc.Informers.Certificates().V1().CertificateSigningRequests()
	c := &Controller{kc: kc, log: kc.Logger.Named("csrcleaner"), q: kc.NewQueue("csrcleaner"),
		csrs: inf.Lister(), synced: inf.Informer().HasSynced, now: time.Now}
	if _, err := inf.Informer().AddEventHandler(kit.EnqueueHandler(c.q)); err != nil {
		return nil, fmt.Errorf("csr handler: %w", err)
	}
	return c, nil
}

// Run cleans until ctx ends.
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
	at, ok := deadline(csr)
	if !ok {
		return nil
	}
	if wait := at.Sub(c.now()); wait > 0 {
		kit.Requeue(c.q, name, wait)
		return nil
	}
	uid := csr.UID
	err = c.kc.Client.CertificatesV1().CertificateSigningRequests().Delete(ctx, name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete csr %q: %w", name, err)
	}
	c.log.Debug("deleted an old CSR", zap.String("csr", name))
	return nil
}

// deadline is when csr may go, by upstream's rules: the earliest of them
// that applies (none: conditions without times, kept as upstream does).
func deadline(csr *certificatesv1.CertificateSigningRequest) (time.Time, bool) {
	issued := len(csr.Status.Certificate) > 0
	var at time.Time
	earlier := func(t time.Time) {
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	if len(csr.Status.Conditions) == 0 {
		earlier(csr.CreationTimestamp.Add(pendingExpiration))
	}
	for _, cd := range csr.Status.Conditions {
		if cd.LastUpdateTime.IsZero() {
			continue
		}
		switch {
		case cd.Type == certificatesv1.CertificateDenied, cd.Type == certificatesv1.CertificateFailed:
			earlier(cd.LastUpdateTime.Add(deniedExpiration))
		case cd.Type == certificatesv1.CertificateApproved && issued:
			earlier(cd.LastUpdateTime.Add(approvedExpiration))
		case cd.Type == certificatesv1.CertificateApproved:
			earlier(cd.LastUpdateTime.Add(pendingExpiration))
		}
	}
	if notAfter, ok := certificateExpiry(csr); ok && approved(csr) {
		earlier(notAfter)
	}
	return at, !at.IsZero()
}

func approved(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, cd := range csr.Status.Conditions {
		if cd.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}

// certificateExpiry is the NotAfter of the issued certificate.
func certificateExpiry(csr *certificatesv1.CertificateSigningRequest) (time.Time, bool) {
	block, _ := pem.Decode(csr.Status.Certificate)
	if block == nil {
		return time.Time{}, false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return time.Time{}, false
	}
	return cert.NotAfter, true
}
