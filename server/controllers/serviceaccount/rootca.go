package serviceaccount

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// RootCAConfigMap is the ConfigMap every namespace gets, and its key.
const (
	RootCAConfigMap = "kube-root-ca.crt"
	RootCAKey       = "ca.crt"
	// descriptionAnnotation is what upstream writes on the ConfigMap.
	descriptionAnnotation = "kubernetes.io/description"
	description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."
)

// RootCA publishes the cluster CA in every namespace.
type RootCA struct {
	kc     *kit.Context
	log    *zap.Logger
	q      kit.Queue
	ca     string
	ns     corelisters.NamespaceLister
	cms    corelisters.ConfigMapLister
	synced []cache.InformerSynced
}

// NewRootCA registers the publisher's informers; caPEM is the cluster CA.
// It watches only the ConfigMaps named kube-root-ca.crt (one a namespace),
// not every ConfigMap of the cluster as upstream's publisher does.
func NewRootCA(kc *kit.Context, caPEM []byte) (*RootCA, error) {
	if len(caPEM) == 0 {
		return nil, fmt.Errorf("root CA publisher: no CA certificate")
	}
	nsInf := kc.Informers.Core().V1().Namespaces()
	cmInf := kc.FilteredInformers("", "metadata.name="+RootCAConfigMap).Core().V1().ConfigMaps()
	c := &RootCA{kc: kc, log: kc.Logger.Named("root-ca-cert-publisher"), q: kc.NewQueue("root-ca-cert-publisher"),
		ca: string(caPEM), ns: nsInf.Lister(), cms: cmInf.Lister()}
	if _, err := nsInf.Informer().AddEventHandler(kit.EnqueueHandler(c.q)); err != nil {
		return nil, fmt.Errorf("namespace handler: %w", err)
	}
	if _, err := cmInf.Informer().AddEventHandler(namespaceOf(c.q, RootCAConfigMap)); err != nil {
		return nil, fmt.Errorf("configmap handler: %w", err)
	}
	c.synced = []cache.InformerSynced{nsInf.Informer().HasSynced, cmInf.Informer().HasSynced}
	return c, nil
}

// Run works the queue until ctx ends.
func (c *RootCA) Run(ctx context.Context) error {
	return runQueue(ctx, c.q, c.synced, c.sync, c.log)
}

func (c *RootCA) sync(ctx context.Context, ns string) error {
	if !active(c.ns, ns) {
		return nil
	}
	api := c.kc.Client.CoreV1().ConfigMaps(ns)
	cur, err := c.cms.ConfigMaps(ns).Get(RootCAConfigMap)
	if apierrors.IsNotFound(err) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: RootCAConfigMap, Namespace: ns,
			Annotations: map[string]string{descriptionAnnotation: description}},
			Data: map[string]string{RootCAKey: c.ca}}
		_, err = api.Create(ctx, cm, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) || apierrors.IsForbidden(err) && terminating(err) {
			return nil
		}
		return err
	}
	if err != nil {
		return err
	}
	if len(cur.Data) == 1 && cur.Data[RootCAKey] == c.ca && cur.Annotations[descriptionAnnotation] == description {
		return nil
	}
	cm := cur.DeepCopy()
	cm.Data = map[string]string{RootCAKey: c.ca}
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[descriptionAnnotation] = description
	_, err = api.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}
