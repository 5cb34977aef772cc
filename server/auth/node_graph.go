package auth

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
)

// ErrGraphNotReady means the node graph's pod cache is not filled yet; the
// request fails with 500 and the node retries.
var ErrGraphNotReady = errors.New("node authorizer: pod cache not synced yet")

// PodListerGraph is a NodeGraph over a client-go pod lister (an informer
// cache), so authorization costs no datastore read.
type PodListerGraph struct {
	pods      corelisters.PodLister
	hasSynced func() bool
	volumes   corelisters.PersistentVolumeLister // nil: no volume lookups
	ingresses networkinglisters.IngressLister    // nil: no Ingress TLS Secrets (node_ingress.go)
}

var (
	_ NodeGraph   = (*PodListerGraph)(nil)
	_ VolumeGraph = (*PodListerGraph)(nil)
)

// NewPodListerGraph returns a NodeGraph reading pods from lister; lookups
// fail with ErrGraphNotReady until hasSynced (nil = always) is true.
func NewPodListerGraph(lister corelisters.PodLister, hasSynced func() bool) *PodListerGraph {
	return &PodListerGraph{pods: lister, hasSynced: hasSynced}
}

// NewPodGraph registers the pod, PersistentVolume and Ingress informers
// with factory (for orch server: the server's shared cache over the API
// server's LoopbackTransport; the caller starts it) and returns a graph
// over them.
func NewPodGraph(factory informers.SharedInformerFactory) *PodListerGraph {
	pods, pvs := factory.Core().V1().Pods(), factory.Core().V1().PersistentVolumes()
	ings := factory.Networking().V1().Ingresses()
	graph := NewPodListerGraph(pods.Lister(), func() bool {
		return pods.Informer().HasSynced() && pvs.Informer().HasSynced() && ings.Informer().HasSynced()
	})
	graph.volumes, graph.ingresses = pvs.Lister(), ings.Lister()
	return graph
}

func (g *PodListerGraph) ready() error {
	if g.hasSynced != nil && !g.hasSynced() {
		return ErrGraphNotReady
	}
	return nil
}

// PodNodeName implements NodeGraph.
func (g *PodListerGraph) PodNodeName(_ context.Context, namespace, name string) (string, bool, error) {
	if err := g.ready(); err != nil {
		return "", false, err
	}
	p, err := g.pods.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("pod %s/%s: %w", namespace, name, err)
	}
	return p.Spec.NodeName, true, nil
}

// References implements NodeGraph: it scans the namespace's pods bound to node.
func (g *PodListerGraph) References(_ context.Context, node, resource, namespace, name string) (bool, error) {
	if err := g.ready(); err != nil {
		return false, err
	}
	pods, err := g.pods.Pods(namespace).List(labels.Everything())
	if err != nil {
		return false, fmt.Errorf("listing pods in %q: %w", namespace, err)
	}
	for _, p := range pods {
		if p.Spec.NodeName == node && PodReferences(p, resource, name) {
			return true, nil
		}
	}
	return resource == "secrets" && g.ingressTLSSecret(namespace, name), nil
}

// VolumeNode implements VolumeGraph: the node label of a local-path PV.
func (g *PodListerGraph) VolumeNode(_ context.Context, name string) (string, bool, error) {
	if g.volumes == nil {
		return "", false, nil
	}
	if err := g.ready(); err != nil {
		return "", false, err
	}
	pv, err := g.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("persistentvolume %s: %w", name, err)
	}
	return pv.Labels[VolumeNodeLabel], true, nil
}

// LateGraph is a NodeGraph whose backing graph is set after construction:
// the authorizer is built before the API server whose loopback feeds the
// graph's informer. Until Set, lookups fail with ErrGraphNotReady.
type LateGraph struct {
	g atomic.Pointer[NodeGraph]
}

var (
	_ NodeGraph   = (*LateGraph)(nil)
	_ VolumeGraph = (*LateGraph)(nil)
)

// Set installs the backing graph.
func (l *LateGraph) Set(g NodeGraph) { l.g.Store(&g) }

func (l *LateGraph) get() (NodeGraph, error) {
	g := l.g.Load()
	if g == nil || *g == nil {
		return nil, ErrGraphNotReady
	}
	return *g, nil
}

// PodNodeName implements NodeGraph.
func (l *LateGraph) PodNodeName(ctx context.Context, namespace, name string) (string, bool, error) {
	g, err := l.get()
	if err != nil {
		return "", false, err
	}
	return g.PodNodeName(ctx, namespace, name)
}

// References implements NodeGraph.
func (l *LateGraph) References(ctx context.Context, node, resource, namespace, name string) (bool, error) {
	g, err := l.get()
	if err != nil {
		return false, err
	}
	return g.References(ctx, node, resource, namespace, name)
}

// VolumeNode implements VolumeGraph when the backing graph does (else
// every volume is unknown).
func (l *LateGraph) VolumeNode(ctx context.Context, name string) (string, bool, error) {
	g, err := l.get()
	if err != nil {
		return "", false, err
	}
	if vg, ok := g.(VolumeGraph); ok {
		return vg.VolumeNode(ctx, name)
	}
	return "", false, nil
}

// PodReferences reports whether pod refers to the named secret, configmap,
// persistentvolumeclaim (volumes, projections, env, envFrom, image pull
// secrets, generic ephemeral volumes) or serviceaccount.
func PodReferences(pod *corev1.Pod, resource, name string) bool {
	found := false
	visitPodRefs(pod, func(res, n string) {
		if res == resource && n == name {
			found = true
		}
	})
	return found
}

func visitPodRefs(pod *corev1.Pod, visit func(resource, name string)) {
	if pod.Spec.ServiceAccountName != "" {
		visit("serviceaccounts", pod.Spec.ServiceAccountName)
	}
	for _, s := range pod.Spec.ImagePullSecrets {
		visit("secrets", s.Name)
	}
	for _, v := range pod.Spec.Volumes {
		visitVolumeRefs(pod.Name, v, visit)
	}
	each := func(env []corev1.EnvVar, from []corev1.EnvFromSource) {
		visitEnvRefs(env, from, visit)
	}
	for _, c := range pod.Spec.InitContainers {
		each(c.Env, c.EnvFrom)
	}
	for _, c := range pod.Spec.Containers {
		each(c.Env, c.EnvFrom)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		each(c.Env, c.EnvFrom)
	}
}

func visitVolumeRefs(podName string, v corev1.Volume, visit func(resource, name string)) {
	switch {
	case v.Secret != nil:
		visit("secrets", v.Secret.SecretName)
	case v.ConfigMap != nil:
		visit("configmaps", v.ConfigMap.Name)
	case v.PersistentVolumeClaim != nil:
		visit("persistentvolumeclaims", v.PersistentVolumeClaim.ClaimName)
	case v.Ephemeral != nil:
		visit("persistentvolumeclaims", podName+"-"+v.Name)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if s.Secret != nil {
				visit("secrets", s.Secret.Name)
			}
			if s.ConfigMap != nil {
				visit("configmaps", s.ConfigMap.Name)
			}
		}
	case v.CSI != nil && v.CSI.NodePublishSecretRef != nil:
		visit("secrets", v.CSI.NodePublishSecretRef.Name)
	}
}

func visitEnvRefs(env []corev1.EnvVar, from []corev1.EnvFromSource, visit func(resource, name string)) {
	for _, e := range env {
		if e.ValueFrom == nil {
			continue
		}
		if r := e.ValueFrom.SecretKeyRef; r != nil {
			visit("secrets", r.Name)
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
			visit("configmaps", r.Name)
		}
	}
	for _, f := range from {
		if f.SecretRef != nil {
			visit("secrets", f.SecretRef.Name)
		}
		if f.ConfigMapRef != nil {
			visit("configmaps", f.ConfigMapRef.Name)
		}
	}
}
