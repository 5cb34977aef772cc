package runtimeclass

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/admission"
)

const prefix = "/registry/node.k8s.io/runtimeclasses/"

// Plugin reads RuntimeClasses from the store.
type Plugin struct {
	store datastore.Store
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// New returns the plug-in.
func New(store datastore.Store) *Plugin { return &Plugin{store: store} }

// Name implements admission.Named.
func (p *Plugin) Name() string { return "RuntimeClass" }

// Handles implements admission.Mutator and admission.Validator.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit sets the pod's overhead and merges the class's node selector and
// tolerations into the pod's.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	pod, rc, err := p.objects(ctx, a)
	if err != nil || rc == nil {
		return err
	}
	if rc.Overhead != nil {
		if len(pod.Spec.Overhead) > 0 && !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
		}
		pod.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	}
	if rc.Scheduling == nil {
		return nil
	}
	for k, v := range rc.Scheduling.NodeSelector {
		if pv, ok := pod.Spec.NodeSelector[k]; ok && pv != v {
			return fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, pv)
		}
		if pod.Spec.NodeSelector == nil {
			pod.Spec.NodeSelector = map[string]string{}
		}
		pod.Spec.NodeSelector[k] = v
	}
	for _, t := range rc.Scheduling.Tolerations {
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(x corev1.Toleration) bool { return apiequality.Semantic.DeepEqual(x, t) }) {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, t)
		}
	}
	return nil
}

// Validate refuses a pod whose overhead is not its class's.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	pod, rc, err := p.objects(ctx, a)
	if err != nil || pod == nil {
		return err
	}
	switch {
	case rc != nil && rc.Overhead != nil:
		if !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
		}
	case pod.Spec.Overhead != nil:
		return errors.New("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
	}
	return nil
}

// objects returns the pod being created and its RuntimeClass (nil when it
// names none); a named class that does not exist is an error.
func (p *Plugin) objects(ctx context.Context, a *admission.Attributes) (*corev1.Pod, *nodev1.RuntimeClass, error) {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok || a.Subresource != "" || a.Resource.Resource != "pods" {
		return nil, nil, nil
	}
	if pod.Spec.RuntimeClassName == nil || *pod.Spec.RuntimeClassName == "" {
		return pod, nil, nil
	}
	name := *pod.Spec.RuntimeClassName
	kv, err := p.store.Get(ctx, prefix+name)
	if errors.Is(err, datastore.ErrNotFound) {
		return nil, nil, fmt.Errorf("pod rejected: RuntimeClass %q not found", name)
	} else if err != nil {
		return nil, nil, fmt.Errorf("looking up RuntimeClass %q: %w", name, err)
	}
	var rc nodev1.RuntimeClass
	if err := json.Unmarshal(kv.Value, &rc); err != nil {
		return nil, nil, fmt.Errorf("decoding RuntimeClass %q: %w", name, err)
	}
	return pod, &rc, nil
}
