package webhook

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/orch/orch/server/admission"
)

// reinvocationKey names the webhooks' state in the request's attributes.
const reinvocationKey = "MutatingAdmissionWebhook"

// reinvocation is upstream's webhookReinvokeContext: the IfNeeded
// webhooks called since the last change, those to call again, and the
// object as the webhooks last left it.
type reinvocation struct {
	lastOutput runtime.Object
	invoked    sets.Set[string]
	reinvoke   sets.Set[string]
}

func reinvocationOf(a *admission.Attributes) *reinvocation {
	if rc, ok := a.ReinvocationValue(reinvocationKey).(*reinvocation); ok {
		return rc
	}
	rc := &reinvocation{invoked: sets.New[string](), reinvoke: sets.New[string]()}
	a.SetReinvocationValue(reinvocationKey, rc)
	return rc
}

// requireReinvoking marks the IfNeeded webhooks called so far for the
// second run.
func (r *reinvocation) requireReinvoking() {
	r.reinvoke = r.reinvoke.Union(r.invoked)
	r.invoked = sets.New[string]()
}

func (r *reinvocation) outputChanged(obj runtime.Object) bool {
	return !apiequality.Semantic.DeepEqual(r.lastOutput, obj)
}

func (r *reinvocation) setOutput(obj runtime.Object) { r.lastOutput = obj.DeepCopyObject() }
