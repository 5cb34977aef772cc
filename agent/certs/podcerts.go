package certs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"go.uber.org/zap"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/orch/orch/agent/volumes"
)

// assumeDeleted: a request this old that the informer never showed was
// deleted; upstream's assumeDeletedThreshold.
const assumeDeleted = 10 * time.Minute

// PodCertsConfig configures PodCerts.
type PodCertsConfig struct {
	Client   kubernetes.Interface
	NodeName string
	Recorder record.EventRecorder // nil: no events
	Log      *zap.Logger
	Now      func() time.Time // nil: time.Now
	// Jitter is added to each refresh time (nil: up to 5 minutes, as
	// upstream), so the pods of a node do not all renew at once.
	Jitter func() time.Duration
}

// PodCerts requests and refreshes the certificates of podCertificate
// projections.
type PodCerts struct {
	cfg PodCertsConfig
	log *zap.Logger

	mu     sync.Mutex
	recs   map[sourceKey]*source
	pods   map[types.UID]types.NamespacedName
	lister certlisters.PodCertificateRequestLister
	resync func(namespace, name string)
}

// sourceKey names one podCertificate source of one pod.
type sourceKey struct {
	pod    types.UID
	volume string
	index  int
}

// NewPodCerts returns a PodCerts; Run starts it.
func NewPodCerts(cfg PodCertsConfig) *PodCerts {
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &record.FakeRecorder{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Jitter == nil {
		cfg.Jitter = func() time.Duration { return time.Duration(rand.Int64N(int64(5 * time.Minute))) }
	}
	return &PodCerts{cfg: cfg, log: cfg.Log.Named("podcerts"), recs: map[sourceKey]*source{}, pods: map[types.UID]types.NamespacedName{}}
}

// Run watches this node's PodCertificateRequests until ctx ends; resync
// is called with a pod whose request changed.
func (m *PodCerts) Run(ctx context.Context, resync func(namespace, name string)) {
	f := informers.NewSharedInformerFactoryWithOptions(m.cfg.Client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", m.cfg.NodeName).String()
	}))
	inf := f.Certificates().V1().PodCertificateRequests()
	notify := func(obj interface{}) {
		if r, ok := obj.(*certificatesv1.PodCertificateRequest); ok {
			m.changed(r.Spec.PodUID)
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: notify, UpdateFunc: func(_, n interface{}) { notify(n) }, DeleteFunc: notify,
	}); err != nil {
		m.log.Error("podcertificaterequest informer", zap.Error(err))
		return
	}
	m.mu.Lock()
	m.lister, m.resync = inf.Lister(), resync
	m.mu.Unlock()
	f.StartWithContext(ctx)
	<-ctx.Done()
	f.Shutdown()
}

// changed resyncs the pod whose request changed, if it is one of ours.
func (m *PodCerts) changed(uid types.UID) {
	m.mu.Lock()
	pod, ok := m.pods[uid]
	resync := m.resync
	m.mu.Unlock()
	if ok && resync != nil {
		resync(pod.Namespace, pod.Name)
	}
}

// Forget drops the state of a pod that is gone.
func (m *PodCerts) Forget(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.pods, uid)
	for k := range m.recs {
		if k.pod == uid {
			delete(m.recs, k)
		}
	}
}

// PodCertificate implements volumes.PodCertificateSource: it moves the
// source's state along and returns its current credentials.
func (m *PodCerts) PodCertificate(ctx context.Context, pod *corev1.Pod, volume string, index int, proj *corev1.PodCertificateProjection) ([]byte, []byte, error) {
	m.mu.Lock()
	if m.lister == nil {
		m.mu.Unlock()
		return nil, nil, fmt.Errorf("pod certificate manager is not running")
	}
	key := sourceKey{pod: pod.UID, volume: volume, index: index}
	rec, ok := m.recs[key]
	if !ok {
		rec = &source{}
		m.recs[key] = rec
	}
	m.pods[pod.UID] = types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	lister := m.lister
	m.mu.Unlock()

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if err := m.advance(ctx, lister, pod, proj, rec); err != nil {
		return nil, nil, err
	}
	return rec.credentials()
}

// advance runs the state machine of one source: request, wait, issued,
// refresh; Denied and Failed are final.
func (m *PodCerts) advance(ctx context.Context, lister certlisters.PodCertificateRequestLister, pod *corev1.Pod, proj *corev1.PodCertificateProjection, rec *source) error {
	now := m.cfg.Now()
	if rec.pending != nil {
		if err := m.check(lister, pod, rec, now); err != nil {
			return err
		}
	}
	needNew := rec.final == nil && rec.pending == nil && (rec.chain == nil || !now.Before(rec.refreshAt))
	if !needNew {
		return nil
	}
	req, err := m.request(ctx, pod, proj)
	if err != nil {
		return err
	}
	rec.pending = req
	if rec.chain == nil {
		m.log.Debug("requested a pod certificate", zap.String("pod", pod.Namespace+"/"+pod.Name), zap.String("request", req.name))
	} else {
		m.log.Info("refreshing a pod certificate", zap.String("pod", pod.Namespace+"/"+pod.Name), zap.String("request", req.name))
	}
	return nil
}

// check looks at the pending request: issued moves its key and chain in,
// Denied or Failed ends the source, a request that vanished is made again.
func (m *PodCerts) check(lister certlisters.PodCertificateRequestLister, pod *corev1.Pod, rec *source, now time.Time) error {
	r, err := lister.PodCertificateRequests(pod.Namespace).Get(rec.pending.name)
	switch {
	case apierrors.IsNotFound(err):
		if now.After(rec.pending.abandonAt) {
			rec.pending = nil
		}
		return nil
	case err != nil:
		return fmt.Errorf("while getting PodCertificateRequest %q: %w", pod.Namespace+"/"+rec.pending.name, err)
	}
	for _, c := range r.Status.Conditions {
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued:
			rec.key, rec.chain = rec.pending.key, cleanChain(r.Status.CertificateChain)
			rec.refreshAt = now.Add(time.Hour)
			if r.Status.BeginRefreshAt != nil {
				rec.refreshAt = r.Status.BeginRefreshAt.Add(m.cfg.Jitter())
			}
			rec.pending = nil
			return nil
		case certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
			rec.final = fmt.Errorf("PodCertificateRequest was permanently %s: reason=%q message=%q", pastTense(c.Type), c.Reason, c.Message)
			m.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, c.Type, "PodCertificateRequest %s was %s, reason=%q, message=%q",
				pod.Namespace+"/"+r.Name, pastTense(c.Type), c.Reason, c.Message)
			rec.pending = nil
			return nil
		}
	}
	return nil
}

func pastTense(condType string) string {
	if condType == certificatesv1.PodCertificateRequestConditionTypeDenied {
		return "denied"
	}
	return "failed"
}

// source is the state of one podCertificate source.
type source struct {
	mu sync.Mutex
	// key and chain are the credentials issued last (nil before).
	key, chain []byte
	refreshAt  time.Time
	// pending is the request waiting for a signer.
	pending *pendingRequest
	// final is set once a request was denied or failed.
	final error
}

type pendingRequest struct {
	name      string
	key       []byte // PEM private key
	abandonAt time.Time
}

func (s *source) credentials() ([]byte, []byte, error) {
	switch {
	case s.final != nil:
		return nil, nil, s.final
	case s.chain == nil:
		return nil, nil, volumes.ErrCertificatePending
	}
	return s.key, s.chain, nil
}
