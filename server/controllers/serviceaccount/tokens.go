package serviceaccount

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// LegacyIssuer signs the token of a kubernetes.io/service-account-token Secret.
type LegacyIssuer func(namespace, saName, saUID, secretName string) (string, error)

// Tokens is upstream's tokens controller for Secret-based tokens: a Secret
// of type kubernetes.io/service-account-token naming a ServiceAccount in
// its kubernetes.io/service-account.name annotation gets token, ca.crt and
// namespace filled in and the ServiceAccount's uid annotated; it is deleted
// when its ServiceAccount is gone.
type Tokens struct {
	kc     *kit.Context
	log    *zap.Logger
	q      kit.Queue
	issue  LegacyIssuer
	ca     []byte
	sas    corelisters.ServiceAccountLister
	secs   corelisters.SecretLister
	synced []cache.InformerSynced
}

// NewTokens registers the controller's informers: ServiceAccounts from the
// shared cache, and only the Secrets of type
// kubernetes.io/service-account-token (a cluster's other Secrets, Helm's
// releases among them, are not held for it).
func NewTokens(kc *kit.Context, issue LegacyIssuer, caPEM []byte) (*Tokens, error) {
	if issue == nil {
		return nil, fmt.Errorf("tokens controller: no token issuer")
	}
	saInf := kc.Informers.Core().V1().ServiceAccounts()
	secInf := kc.FilteredInformers("", "type="+string(corev1.SecretTypeServiceAccountToken)).Core().V1().Secrets()
	c := &Tokens{kc: kc, log: kc.Logger.Named("serviceaccount-token"), q: kc.NewQueue("serviceaccount-token"),
		issue: issue, ca: caPEM, sas: saInf.Lister(), secs: secInf.Lister()}
	if _, err := secInf.Informer().AddEventHandler(kit.EnqueueHandler(c.q)); err != nil {
		return nil, fmt.Errorf("secret handler: %w", err)
	}
	if _, err := saInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: c.enqueueSecretsOf, UpdateFunc: func(_, n any) { c.enqueueSecretsOf(n) }}); err != nil {
		return nil, fmt.Errorf("serviceaccount handler: %w", err)
	}
	c.synced = []cache.InformerSynced{saInf.Informer().HasSynced, secInf.Informer().HasSynced}
	return c, nil
}

// Run works the queue until ctx ends.
func (c *Tokens) Run(ctx context.Context) error {
	return runQueue(ctx, c.q, c.synced, c.sync, c.log)
}

// enqueueSecretsOf enqueues the token Secrets of a ServiceAccount.
func (c *Tokens) enqueueSecretsOf(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	sa, ok := obj.(*corev1.ServiceAccount)
	if !ok {
		return
	}
	secs, err := c.secs.Secrets(sa.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, s := range secs {
		if s.Type == corev1.SecretTypeServiceAccountToken && s.Annotations[corev1.ServiceAccountNameKey] == sa.Name {
			kit.Enqueue(c.q, s)
		}
	}
}

func (c *Tokens) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	s, err := c.secs.Secrets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || s.Type != corev1.SecretTypeServiceAccountToken || s.DeletionTimestamp != nil {
		return err
	}
	sa, err := c.serviceAccount(ctx, ns, s.Annotations[corev1.ServiceAccountNameKey])
	if err != nil {
		return err
	}
	uid := s.Annotations[corev1.ServiceAccountUIDKey]
	if sa == nil || (uid != "" && uid != string(sa.UID)) {
		err := c.kc.Client.CoreV1().Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	return c.populate(ctx, s, sa)
}

// serviceAccount reads from the cache, then live (a ServiceAccount and its
// Secret are often created back to back); nil when it does not exist.
func (c *Tokens) serviceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	if name == "" {
		return nil, nil
	}
	if sa, err := c.sas.ServiceAccounts(ns).Get(name); err == nil {
		return sa, nil
	}
	sa, err := c.kc.Client.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return sa, err
}

// populate fills in what the Secret lacks.
func (c *Tokens) populate(ctx context.Context, s *corev1.Secret, sa *corev1.ServiceAccount) error {
	if len(s.Data[corev1.ServiceAccountTokenKey]) > 0 && len(s.Data[corev1.ServiceAccountRootCAKey]) > 0 &&
		len(s.Data[corev1.ServiceAccountNamespaceKey]) > 0 && s.Annotations[corev1.ServiceAccountUIDKey] != "" {
		return nil
	}
	out := s.DeepCopy()
	if out.Data == nil {
		out.Data = map[string][]byte{}
	}
	if len(out.Data[corev1.ServiceAccountTokenKey]) == 0 {
		tok, err := c.issue(s.Namespace, sa.Name, string(sa.UID), s.Name)
		if err != nil {
			return fmt.Errorf("signing the token of secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		out.Data[corev1.ServiceAccountTokenKey] = []byte(tok)
	}
	out.Data[corev1.ServiceAccountRootCAKey] = c.ca
	out.Data[corev1.ServiceAccountNamespaceKey] = []byte(s.Namespace)
	out.Annotations[corev1.ServiceAccountUIDKey] = string(sa.UID)
	_, err := c.kc.Client.CoreV1().Secrets(s.Namespace).Update(ctx, out, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil // the new version is queued
	}
	return err
}
