package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	scaleGVK    = autoscalingv1.SchemeGroupVersion.WithKind("Scale")
	bindingGVK  = corev1.SchemeGroupVersion.WithKind("Binding")
	evictionGVK = policyv1.SchemeGroupVersion.WithKind("Eviction")
	nsGVK       = corev1.SchemeGroupVersion.WithKind("Namespace")
)

// scaleOf is the autoscaling/v1 Scale view of obj.
func scaleOf(rc *reqCtx, obj runtime.Object) *autoscalingv1.Scale {
	spec, status, sel := rc.res.Scale.Get(obj)
	m := objectMeta(obj)
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp()},
		Spec:   autoscalingv1.ScaleSpec{Replicas: spec},
		Status: autoscalingv1.ScaleStatus{Replicas: status, Selector: sel},
	}
}

func (s *Server) handleScaleGet(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	obj, _, err := s.getStored(r.Context(), rc.res, rc.ns, rc.name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, scaleOf(rc, obj))
}

// handleScaleUpdate serves PUT of /scale: the Scale's replicas go into the
// object through the main update path (generation bumps, validation).
func (s *Server) handleScaleUpdate(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	body, err := s.decodeRequest(w, r, rc, scaleGVK)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	scale := body.(*autoscalingv1.Scale)
	if scale.Name != rc.name {
		s.writeError(w, r, badRequestf("the name of the object (%s) does not match the name on the URL (%s)", scale.Name, rc.name))
		return
	}
	s.scaleUpdate(w, r, rc, func(runtime.Object) (*autoscalingv1.Scale, error) { return scale.DeepCopy(), nil })
}

// handleScalePatch serves PATCH of /scale (kubectl scale): the patch applies
// to the Scale view.
func (s *Server) handleScalePatch(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	p, err := s.readPatch(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.scaleUpdate(w, r, rc, func(cur runtime.Object) (*autoscalingv1.Scale, error) {
		orig := scaleOf(rc, cur)
		data, err := json.Marshal(orig)
		if err != nil {
			return nil, err
		}
		patched, err := p.apply(data, &autoscalingv1.Scale{}, scaleGVK.GroupKind(), rc.name)
		if err != nil {
			return nil, err
		}
		obj, err := s.decodeInto(w, rc, patched, formatJSON, scaleGVK)
		if err != nil {
			return nil, err
		}
		sc := obj.(*autoscalingv1.Scale)
		if sc.ResourceVersion == orig.ResourceVersion {
			sc.ResourceVersion = ""
		}
		return sc, nil
	})
}

func (s *Server) scaleUpdate(w http.ResponseWriter, r *http.Request, rc *reqCtx, next func(cur runtime.Object) (*autoscalingv1.Scale, error)) {
	dryRun, err := parseDryRun(rc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.guaranteedUpdate(r.Context(), rc, modeMain, dryRun, func(cur runtime.Object) (runtime.Object, error) {
		sc, err := next(cur)
		if err != nil {
			return nil, err
		}
		if sc.Spec.Replicas < 0 {
			return nil, apierrors.NewInvalid(scaleGVK.GroupKind(), rc.name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), sc.Spec.Replicas, "must be greater than or equal to 0")})
		}
		objectMeta(cur).SetResourceVersion(sc.ResourceVersion)
		rc.res.Scale.Set(cur, sc.Spec.Replicas)
		return cur, nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, scaleOf(rc, res.obj))
}

// handleBinding serves POST pods/<name>/binding: it sets spec.nodeName of an
// unassigned pod (the scheduler's write).
func (s *Server) handleBinding(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	body, err := s.decodeRequest(w, r, rc, bindingGVK)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	b := body.(*corev1.Binding)
	if err := checkBinding(rc, b); err != nil {
		s.writeError(w, r, err)
		return
	}
	gr := schema.GroupResource{Resource: "pods/binding"}
	_, err = s.guaranteedUpdate(r.Context(), rc, modeRaw, false, func(cur runtime.Object) (runtime.Object, error) {
		pod := cur.(*corev1.Pod)
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(gr, rc.name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(gr, rc.name, fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName))
		}
		bindPod(pod, b)
		pod.ResourceVersion = ""
		return pod, nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, successStatus(http.StatusCreated, nil))
}

func checkBinding(rc *reqCtx, b *corev1.Binding) error {
	if b.Name != rc.name {
		return badRequestf("name in URL (%s) does not match name in Binding object (%s)", rc.name, b.Name)
	}
	if b.Namespace != "" && b.Namespace != rc.ns {
		return badRequestf("the namespace of the provided object (%s) does not match the namespace sent on the request (%s)", b.Namespace, rc.ns)
	}
	var errs field.ErrorList
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(bindingGVK.GroupKind(), b.Name, errs)
	}
	return nil
}

// bindPod sets the node, copies the binding's annotations and marks the pod scheduled.
func bindPod(pod *corev1.Pod, b *corev1.Binding) {
	pod.Spec.NodeName = b.Target.Name
	for k, v := range b.Annotations {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[k] = v
	}
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodScheduled {
			pod.Status.Conditions[i] = cond
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, cond)
}

// handleEviction serves POST pods/<name>/eviction: unless the pod's
// PodDisruptionBudget forbids it (429), the pod gets the DisruptionTarget
// condition and is deleted with the Eviction's DeleteOptions.
func (s *Server) handleEviction(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	body, err := s.decodeRequest(w, r, rc, evictionGVK)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ev := body.(*policyv1.Eviction)
	if ev.Name != rc.name {
		s.writeError(w, r, badRequestf("name in URL (%s) does not match name in Eviction object (%s)", rc.name, ev.Name))
		return
	}
	opts := ev.DeleteOptions
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	if err := validateDeleteOptions(opts); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.evictionAllowed(r.Context(), rc, len(opts.DryRun) > 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(opts.DryRun) == 0 {
		if opts, err = s.markEvicted(r.Context(), rc, opts); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	if _, err := s.deleteObject(r.Context(), rc, rc.name, opts, len(opts.DryRun) > 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, successStatus(http.StatusCreated, nil))
}

// handleFinalize serves PUT namespaces/<name>/finalize: only
// spec.finalizers changes; a deleted namespace whose finalizers are all gone
// is removed.
func (s *Server) handleFinalize(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	body, err := s.decodeRequest(w, r, rc, nsGVK)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	want := body.(*corev1.Namespace)
	if want.Name != rc.name {
		s.writeError(w, r, badRequestf("the name of the object (%s) does not match the name on the URL (%s)", want.Name, rc.name))
		return
	}
	res, err := s.guaranteedUpdate(r.Context(), rc, modeRaw, false, func(cur runtime.Object) (runtime.Object, error) {
		ns := cur.(*corev1.Namespace)
		ns.Spec.Finalizers = want.Spec.Finalizers
		ns.ResourceVersion = want.ResourceVersion
		return ns, nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, rc, http.StatusOK, res.obj)
}
