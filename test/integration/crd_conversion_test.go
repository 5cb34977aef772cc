package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("CRDConversionWebhook", testCRDConversionWebhook)
}

// converter is a conversion webhook for Thermostats: v1 stores
// spec.celsius, v2 shows spec.fahrenheit. It renames what it converts
// (the server must restore the name) and labels it converted-to=<version>
// (labels may change). fail makes it answer Failure.
type converter struct {
	mu      sync.Mutex
	calls   int
	objects int
	fail    bool
}

func (c *converter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review apiextensionsv1.ConversionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.calls++
	c.objects += len(review.Request.Objects)
	fail := c.fail
	c.mu.Unlock()
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	if fail {
		resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: "thermometer broken"}
	}
	for _, raw := range review.Request.Objects {
		var u unstructured.Unstructured
		_ = u.UnmarshalJSON(raw.Raw)
		convertThermostat(&u, review.Request.DesiredAPIVersion)
		out, _ := u.MarshalJSON()
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: out})
	}
	review.Response, review.Request = resp, nil
	_ = json.NewEncoder(w).Encode(review)
}

func convertThermostat(u *unstructured.Unstructured, to string) {
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	if strings.HasSuffix(to, "/v2") {
		if c, ok := spec["celsius"].(int64); ok {
			spec = map[string]interface{}{"fahrenheit": c*9/5 + 32}
		}
	} else if f, ok := spec["fahrenheit"].(int64); ok {
		spec = map[string]interface{}{"celsius": (f - 32) * 5 / 9}
	}
	_ = unstructured.SetNestedMap(u.Object, spec, "spec")
	u.SetAPIVersion(to)
	u.SetName("renamed-by-the-webhook")
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["converted-to"] = to[strings.LastIndex(to, "/")+1:]
	u.SetLabels(labels)
}

func (c *converter) counts() (calls, objects int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, c.objects
}

func thermostatCRD(group string, url string, ca []byte) *apiextensionsv1.CustomResourceDefinition {
	version := func(name, field string, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: true, Storage: storage,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{field: {Type: "integer"}}}}}}}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "thermostats." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "thermostats", Singular: "thermostat", Kind: "Thermostat"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{version("v1", "celsius", true), version("v2", "fahrenheit", false)},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: ptr.To(url), CABundle: ca}}},
		},
	}
}

// testCRDConversionWebhook: objects are stored in the storage version
// and served in every version through the CRD's conversion webhook —
// get, list (one call for the page), watch, update, patch — with only
// labels and annotations of the metadata taken from the webhook; a failing
// webhook is a 500 naming it.
func testCRDConversionWebhook(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ext, err := apiextclient.NewForConfig(s.Config)
	must(t, err, "apiextensions client")
	dyn, err := dynamic.NewForConfig(s.Config)
	must(t, err, "dynamic client")
	conv := &converter{}
	srv, ca := newTLSServer(t, "127.0.0.1", conv)
	group := fmt.Sprintf("conv%04x.example.com", time.Now().UnixNano()&0xffff)
	createEstablished(t, ext, thermostatCRD(group, srv.URL+"/convert", ca))
	ns := newNamespace(t, s.Clientset)
	v1 := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "thermostats"}).Namespace(ns)
	v2 := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v2", Resource: "thermostats"}).Namespace(ns)
	thermostat := func(name string, f int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": group + "/v2", "kind": "Thermostat",
			"metadata": map[string]interface{}{"name": name}, "spec": map[string]interface{}{"fahrenheit": f}}}
	}
	var created *unstructured.Unstructured
	waitFor(t, "thermostats served", func() error {
		created, err = v2.Create(ctx, thermostat("boiling", 212), metav1.CreateOptions{})
		return err
	})
	if f, _, _ := unstructured.NestedInt64(created.Object, "spec", "fahrenheit"); f != 212 || created.GetName() != "boiling" {
		t.Fatalf("created through v2: %v", created.Object)
	}
	stored, err := v1.Get(ctx, "boiling", metav1.GetOptions{})
	must(t, err, "get v1")
	if c, _, _ := unstructured.NestedInt64(stored.Object, "spec", "celsius"); c != 100 || stored.GetLabels()["converted-to"] != "v1" {
		t.Fatalf("stored (v1) object: %v", stored.Object)
	}
	w, err := v2.Watch(ctx, metav1.ListOptions{ResourceVersion: stored.GetResourceVersion()})
	must(t, err, "watch v2")
	defer w.Stop()
	for _, n := range []string{"a", "b"} {
		_, err := v1.Create(ctx, &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": group + "/v1", "kind": "Thermostat",
			"metadata": map[string]interface{}{"name": n}, "spec": map[string]interface{}{"celsius": int64(0)}}}, metav1.CreateOptions{})
		must(t, err, "create %s through v1", n)
	}
	for _, want := range []string{"a", "b"} { // both events, so their conversions are done before the list
		select {
		case ev := <-w.ResultChan():
			u, _ := ev.Object.(*unstructured.Unstructured)
			if f, _, _ := unstructured.NestedInt64(u.Object, "spec", "fahrenheit"); ev.Type != watch.Added || u.GetName() != want || f != 32 {
				t.Fatalf("watch v2 event: %s %v", ev.Type, u)
			}
		case <-ctx.Done():
			t.Fatal("no watch event")
		}
	}
	calls, objects := conv.counts()
	list, err := v2.List(ctx, metav1.ListOptions{})
	must(t, err, "list v2")
	calls2, objects2 := conv.counts()
	if len(list.Items) != 3 || calls2-calls != 1 || objects2-objects != 3 {
		t.Fatalf("list v2: %d items, %d calls for %d objects; want 3 items in 1 call", len(list.Items), calls2-calls, objects2-objects)
	}
	_, err = v1.Patch(ctx, "a", types.MergePatchType, []byte(`{"spec":{"celsius":37}}`), metav1.PatchOptions{})
	must(t, err, "patch v1")
	a, err := v2.Get(ctx, "a", metav1.GetOptions{})
	must(t, err, "get a v2")
	if f, _, _ := unstructured.NestedInt64(a.Object, "spec", "fahrenheit"); f != 98 || a.GetName() != "a" {
		t.Fatalf("patched a through v2: %v", a.Object)
	}
	must(t, unstructured.SetNestedField(a.Object, int64(32), "spec", "fahrenheit"), "set")
	_, err = v2.Update(ctx, a, metav1.UpdateOptions{})
	must(t, err, "update v2")
	a1, err := v1.Get(ctx, "a", metav1.GetOptions{})
	must(t, err, "get a v1")
	if c, _, _ := unstructured.NestedInt64(a1.Object, "spec", "celsius"); c != 0 {
		t.Fatalf("updated through v2, stored: %v", a1.Object)
	}
	conv.mu.Lock()
	conv.fail = true
	conv.mu.Unlock()
	_, err = v2.Get(ctx, "a", metav1.GetOptions{})
	st := wantCode(t, err, 500, "a get through a failing conversion webhook")
	if !strings.Contains(st.Message, "conversion webhook for "+group+"/v2, Kind=Thermostat failed") || !strings.Contains(st.Message, "thermometer broken") {
		t.Fatalf("failure message: %q", st.Message)
	}
	if _, err := v1.Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Fatalf("the storage version needs no webhook: %v", err)
	}
}
