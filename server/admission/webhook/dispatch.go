package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"time"

	"go.uber.org/zap"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"

	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/admission/celcond"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/webhookclient"
)

// Dispatcher holds what both plug-ins share: the configurations, the
// Service resolver and the logger.
type Dispatcher struct {
	src    lateSource
	client webhookclient.Client
	log    *zap.Logger
	// cel compiles matchConditions; matchers caches them per webhook
	// (configuration name, resourceVersion and webhook name).
	cel      *celcond.Compiler
	matchers sync.Map
	authz    auth.Authorizer
}

// New returns a dispatcher with no configurations until SetSource; authz
// answers matchConditions' authorizer checks.
func New(log *zap.Logger, authz auth.Authorizer) *Dispatcher {
	return &Dispatcher{log: log.Named("webhook"), cel: celcond.New(), authz: authz}
}

// SetSource installs the configurations and the Service resolver (both
// need the API server's loopback client, made after the chain).
func (d *Dispatcher) SetSource(s Source, r Resolver) {
	d.client.Resolver = r
	d.src.p.Store(&s)
}

// Mutating is the MutatingAdmissionWebhook plug-in.
func (d *Dispatcher) Mutating() admission.Mutator { return mutating{d} }

// Validating is the ValidatingAdmissionWebhook plug-in.
func (d *Dispatcher) Validating() admission.Validator { return validating{d} }

type mutating struct{ d *Dispatcher }

// Reinvocable implements admission.Reinvocable.
func (mutating) Reinvocable() {}

func (mutating) Name() string                     { return "MutatingAdmissionWebhook" }
func (mutating) Handles(admission.Operation) bool { return true }
func (m mutating) Admit(ctx context.Context, a *admission.Attributes) error {
	return m.d.mutate(ctx, a)
}

type validating struct{ d *Dispatcher }

func (validating) Name() string                     { return "ValidatingAdmissionWebhook" }
func (validating) Handles(admission.Operation) bool { return true }
func (v validating) Validate(ctx context.Context, a *admission.Attributes) error {
	return v.d.validate(ctx, a)
}

// hook is one webhook of either kind.
type hook struct {
	name        string
	cc          admissionregistrationv1.WebhookClientConfig
	rules       []admissionregistrationv1.RuleWithOperations
	ignore      bool
	nsSel       *metav1.LabelSelector
	objSel      *metav1.LabelSelector
	sideEffects *admissionregistrationv1.SideEffectClass
	timeout     time.Duration
	conds       []admissionregistrationv1.MatchCondition
	fp          *admissionregistrationv1.FailurePolicyType
	kind        string // "admit" or "validating"
	key         string // identifies the compiled conditions
	reinvoke    bool   // reinvocationPolicy IfNeeded (mutating)
	review      string // the AdmissionReview apiVersion it speaks
	equivalent  bool   // matchPolicy Equivalent (the default)
}

func mutatingHook(cfg *admissionregistrationv1.MutatingWebhookConfiguration, w *admissionregistrationv1.MutatingWebhook) hook {
	return hook{w.Name, w.ClientConfig, w.Rules, ignored(w.FailurePolicy), w.NamespaceSelector, w.ObjectSelector,
		w.SideEffects, timeoutOf(w.TimeoutSeconds), w.MatchConditions, w.FailurePolicy, "admit",
		"m/" + cfg.Name + "/" + cfg.ResourceVersion + "/" + w.Name,
		w.ReinvocationPolicy != nil && *w.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy,
		reviewVersion(w.AdmissionReviewVersions), equivalent(w.MatchPolicy)}
}

func validatingHook(cfg *admissionregistrationv1.ValidatingWebhookConfiguration, w *admissionregistrationv1.ValidatingWebhook) hook {
	return hook{w.Name, w.ClientConfig, w.Rules, ignored(w.FailurePolicy), w.NamespaceSelector, w.ObjectSelector,
		w.SideEffects, timeoutOf(w.TimeoutSeconds), w.MatchConditions, w.FailurePolicy, "validating",
		"v/" + cfg.Name + "/" + cfg.ResourceVersion + "/" + w.Name, false, reviewVersion(w.AdmissionReviewVersions),
		equivalent(w.MatchPolicy)}
}

// equivalent: matchPolicy Equivalent, the default.
func equivalent(p *admissionregistrationv1.MatchPolicyType) bool {
	return p == nil || *p == admissionregistrationv1.Equivalent
}

func timeoutOf(s *int32) time.Duration {
	if s == nil {
		return 10 * time.Second
	}
	return time.Duration(*s) * time.Second
}

func ignored(fp *admissionregistrationv1.FailurePolicyType) bool {
	return fp != nil && *fp == admissionregistrationv1.Ignore
}

// exempt: webhooks never see the webhook configurations themselves.
func exempt(a *admission.Attributes) bool {
	return a.Resource.Group == admissionregistrationv1.GroupName
}

// matches returns the request as h sees it when h applies to a (a itself,
// or a in another version of the resource), nil when h does not apply:
// rules, selectors, then matchConditions (whose evaluation errors follow
// the failurePolicy).
func (d *Dispatcher) matches(ctx context.Context, h hook, a *admission.Attributes) (*admission.Attributes, error) {
	va, err := ruleVersion(ctx, h, a)
	if va == nil || err != nil {
		return nil, err
	}
	ok, err := selectorsMatch(h.nsSel, h.objSel, va, d.src.get())
	if err != nil {
		d.log.Warn("webhook selector", zap.String("webhook", h.name), zap.Error(err))
	}
	if !ok {
		return nil, nil
	}
	if len(h.conds) == 0 {
		return va, nil
	}
	r := celcond.Match(ctx, d.matcher(h), va, d.authz)
	if r.Error != nil {
		return nil, d.failure(h, fmt.Errorf("failed to evaluate match conditions: %w", r.Error))
	}
	if !r.Matches {
		return nil, nil
	}
	return va, nil
}

// ruleVersion is a when one of h's rules names the request's version;
// else, under matchPolicy Equivalent, a converted to the first other
// version of the resource a rule names (upstream's equivalent matching).
func ruleVersion(ctx context.Context, h hook, a *admission.Attributes) (*admission.Attributes, error) {
	if rulesMatch(h.rules, a) {
		return a, nil
	}
	if !h.equivalent || a.Equivalents == nil {
		return nil, nil
	}
	for _, eq := range a.Equivalents() {
		probe := &admission.Attributes{Operation: a.Operation, Resource: eq.Resource, Subresource: a.Subresource, Namespace: a.Namespace}
		if !rulesMatch(h.rules, probe) {
			continue
		}
		va, err := a.InVersion(ctx, eq)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("webhook %q: %w", h.name, err))
		}
		return va, nil
	}
	return nil, nil
}

func rulesMatch(rules []admissionregistrationv1.RuleWithOperations, a *admission.Attributes) bool {
	for _, r := range rules {
		if ruleMatches(r, a) {
			return true
		}
	}
	return false
}

// matcher is h's compiled matchConditions, compiled once per webhook and
// configuration version.
func (d *Dispatcher) matcher(h hook) matchconditions.Matcher {
	if m, ok := d.matchers.Load(h.key); ok {
		return m.(matchconditions.Matcher)
	}
	m := d.cel.Matcher(h.conds, h.fp, h.kind, h.name)
	d.matchers.Store(h.key, m)
	return m
}

// mutate calls the matching mutating webhooks in order, as upstream's
// dispatcher: a webhook that changes the object asks the chain for a
// second run, in which only the webhooks with reinvocationPolicy IfNeeded
// that ran before a change are called again.
func (d *Dispatcher) mutate(ctx context.Context, a *admission.Attributes) error {
	if exempt(a) || a.Object == nil {
		return nil
	}
	rc := reinvocationOf(a)
	if a.IsReinvoke() && rc.outputChanged(a.Object) {
		rc.requireReinvoking() // a policy changed the object since
	}
	defer func() { rc.setOutput(a.Object) }()
	for _, cfg := range d.src.get().Mutating() {
		for _, w := range cfg.Webhooks {
			h := mutatingHook(cfg, &w)
			if a.IsReinvoke() && !rc.reinvoke.Has(h.key) {
				continue
			}
			va, err := d.matches(ctx, h, a)
			if err != nil {
				return err
			}
			if va == nil {
				continue
			}
			changed, err := d.callMutating(ctx, h, a, va)
			if err != nil {
				return err
			}
			if changed {
				rc.requireReinvoking()
				a.SetShouldReinvoke()
			}
			if h.reinvoke {
				rc.invoked.Insert(h.key)
			}
		}
	}
	return nil
}

// callMutating calls h with va (a as h sees it) and applies its patch to
// a; changed reports that the patch changed the object.
func (d *Dispatcher) callMutating(ctx context.Context, h hook, a, va *admission.Attributes) (changed bool, err error) {
	review, err := newReview(va, a)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	resp, err := d.ask(ctx, h, a, review)
	if err != nil || resp == nil || len(resp.Patch) == 0 {
		return false, err
	}
	if resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		return false, d.failure(h, fmt.Errorf("unsupported patch type %v", resp.PatchType))
	}
	changed, err = applyPatch(va.Object, review.Request.Object.Raw, resp.Patch)
	if err == nil && changed && va != a {
		err = convertBack(ctx, a, va)
	}
	if err != nil {
		return false, apierrors.NewInternalError(fmt.Errorf("applying the patch of webhook %q: %w", h.name, err))
	}
	return changed, nil
}

// convertBack converts the patched va.Object to a's version and makes it
// a's object.
func convertBack(ctx context.Context, a, va *admission.Attributes) error {
	back := va.Equivalents()[0]
	if err := back.Convert(ctx, []runtime.Object{va.Object}, a.Kind.GroupVersion()); err != nil {
		return err
	}
	dst, ok1 := a.Object.(*unstructured.Unstructured)
	src, ok2 := va.Object.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("cannot carry a %T patched in another version back", a.Object)
	}
	dst.Object = src.Object
	return nil
}

func (d *Dispatcher) validate(ctx context.Context, a *admission.Attributes) error {
	if exempt(a) {
		return nil
	}
	type matched struct {
		h  hook
		va *admission.Attributes
	}
	var hooks []matched
	for _, cfg := range d.src.get().Validating() {
		for _, w := range cfg.Webhooks {
			h := validatingHook(cfg, &w)
			va, err := d.matches(ctx, h, a)
			if err != nil {
				return err
			}
			if va != nil {
				hooks = append(hooks, matched{h, va})
			}
		}
	}
	if len(hooks) == 0 {
		return nil
	}
	shared, err := newReview(a, a) // for the hooks that see the request's own version
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	errs := make([]error, len(hooks))
	var wg sync.WaitGroup
	for i, m := range hooks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			review := shared
			if m.va != a {
				if review, errs[i] = newReview(m.va, a); errs[i] != nil {
					errs[i] = apierrors.NewInternalError(errs[i])
					return
				}
			}
			errs[i] = d.callValidating(ctx, m.h, a, review)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *Dispatcher) callValidating(ctx context.Context, h hook, a *admission.Attributes, review *admissionv1.AdmissionReview) error {
	_, err := d.ask(ctx, h, a, review)
	return err
}

// ask calls one webhook: the dry-run rule, the call with its failure
// policy (a nil response when the failure is ignored), warnings, denial.
func (d *Dispatcher) ask(ctx context.Context, h hook, a *admission.Attributes, review *admissionv1.AdmissionReview) (*admissionv1.AdmissionResponse, error) {
	if err := dryRunAllowed(h, a); err != nil {
		return nil, err
	}
	resp, err := d.call(ctx, h, review)
	if err != nil {
		return nil, d.failure(h, err)
	}
	addWarnings(a, resp)
	if !resp.Allowed {
		return nil, denied(h.name, resp.Result)
	}
	return resp, nil
}

// failure applies the failure policy to a call that did not work.
func (d *Dispatcher) failure(h hook, err error) error {
	err = fmt.Errorf("failed calling webhook %q: %w", h.name, err)
	if h.ignore {
		d.log.Warn("webhook failed; ignored by its failurePolicy", zap.Error(err))
		return nil
	}
	return apierrors.NewInternalError(err)
}

func dryRunAllowed(h hook, a *admission.Attributes) error {
	if !a.DryRun || h.sideEffects == nil {
		return nil
	}
	switch *h.sideEffects {
	case admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.SideEffectClassNoneOnDryRun:
		return nil
	}
	return apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", h.name))
}

func addWarnings(a *admission.Attributes, r *admissionv1.AdmissionResponse) {
	for _, w := range r.Warnings {
		a.AddWarning(w)
	}
}

// denied is upstream's error for a webhook that said no.
func denied(name string, st *metav1.Status) error {
	by := fmt.Sprintf("admission webhook %q denied the request", name)
	out := metav1.Status{Status: metav1.StatusFailure}
	if st != nil {
		out = *st
	}
	if out.Code < http.StatusBadRequest {
		out.Code = http.StatusBadRequest
	}
	if out.Status == "" || out.Status == metav1.StatusSuccess {
		out.Status = metav1.StatusFailure
	}
	switch {
	case out.Message != "":
		out.Message = by + ": " + out.Message
	case out.Reason != "":
		out.Message = by + ": " + string(out.Reason)
	default:
		out.Message = by + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: out}
}

// newReview builds the AdmissionReview v1 request of a as the webhook sees
// it (the request itself, or the request in an equivalent version);
// requestKind and requestResource are those of the request itself, orig.
func newReview(a, orig *admission.Attributes) (*admissionv1.AdmissionReview, error) {
	kind := metav1.GroupVersionKind{Group: a.Kind.Group, Version: a.Kind.Version, Kind: a.Kind.Kind}
	res := metav1.GroupVersionResource{Group: a.Resource.Group, Version: a.Resource.Version, Resource: a.Resource.Resource}
	rkind := metav1.GroupVersionKind{Group: orig.Kind.Group, Version: orig.Kind.Version, Kind: orig.Kind.Kind}
	rres := metav1.GroupVersionResource{Group: orig.Resource.Group, Version: orig.Resource.Version, Resource: orig.Resource.Resource}
	req := &admissionv1.AdmissionRequest{
		UID: uuid.NewUUID(), Kind: kind, Resource: res, SubResource: a.Subresource,
		RequestKind: &rkind, RequestResource: &rres, RequestSubResource: a.Subresource,
		Name: a.Name, Namespace: a.Namespace, Operation: admissionv1.Operation(a.Operation),
		DryRun: &a.DryRun,
	}
	if a.User != nil {
		req.UserInfo = authenticationv1.UserInfo{Username: a.User.Name, UID: a.User.UID, Groups: a.User.Groups}
		if len(a.User.Extra) > 0 {
			req.UserInfo.Extra = map[string]authenticationv1.ExtraValue{}
			for k, v := range a.User.Extra {
				req.UserInfo.Extra[k] = v
			}
		}
	}
	var err error
	if req.Object.Raw, err = encode(a.Object, a.Kind.GroupVersion().String(), a.Kind.Kind); err != nil {
		return nil, err
	}
	if req.OldObject.Raw, err = encode(a.OldObject, a.Kind.GroupVersion().String(), a.Kind.Kind); err != nil {
		return nil, err
	}
	if req.Options.Raw, err = encodeOptions(a.Options); err != nil {
		return nil, err
	}
	return &admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: req}, nil
}

// encode marshals obj with its apiVersion and kind; nil stays absent.
func encode(obj runtime.Object, apiVersion, kind string) ([]byte, error) {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return nil, nil
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if _, ok := m["apiVersion"]; !ok {
		m["apiVersion"], m["kind"] = apiVersion, kind
	}
	return json.Marshal(m)
}

func encodeOptions(o runtime.Object) ([]byte, error) {
	if o == nil || reflect.ValueOf(o).IsNil() {
		return nil, nil
	}
	kind := reflect.TypeOf(o).Elem().Name()
	return encode(o, "meta.k8s.io/v1", kind)
}

// applyPatch applies a JSON patch to obj (whose JSON was original) in place.
func applyPatch(obj runtime.Object, original, patch []byte) (changed bool, err error) {
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return false, err
	}
	out, err := p.Apply(original)
	if err != nil {
		return false, err
	}
	if jsonpatch.Equal(original, out) {
		return false, nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		m := map[string]any{}
		if err := utiljson.Unmarshal(out, &m); err != nil {
			return false, err
		}
		u.Object = m
		return true, nil
	}
	fresh := reflect.New(reflect.TypeOf(obj).Elem())
	if err := json.Unmarshal(out, fresh.Interface()); err != nil {
		return false, err
	}
	if fresh.Type() != reflect.TypeOf(obj) {
		return false, errors.New("patched object has another type")
	}
	reflect.ValueOf(obj).Elem().Set(fresh.Elem())
	return true, nil
}
