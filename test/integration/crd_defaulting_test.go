package integration

import (
	"fmt"
	"testing"
	"time"

	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("CustomResourceDefaultOnRead", testCustomResourceDefaultOnRead)
}

// testCustomResourceDefaultOnRead: a default added to a CRD's schema shows
// on objects stored before it, when they are read.
func testCustomResourceDefaultOnRead(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ext, err := apiextclient.NewForConfig(s.Config)
	must(t, err, "apiextensions client")
	dyn, err := dynamic.NewForConfig(s.Config)
	must(t, err, "dynamic client")
	group := fmt.Sprintf("dr%04x.example.com", time.Now().UnixNano()&0xffff)
	crd := widgetCRD(group)
	createEstablished(t, ext, crd)
	ns := newNamespace(t, s.Clientset)
	wi := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
	waitFor(t, "the widget to be created", func() error {
		_, err := wi.Create(ctx, widget(group, "old", map[string]interface{}{"size": "small"}), metav1.CreateOptions{})
		return err
	})
	_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, crd.Name, types.JSONPatchType,
		[]byte(`[{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/color/default","value":"blue"}]`),
		metav1.PatchOptions{})
	must(t, err, "add a default to the schema")
	waitFor(t, "the stored widget to read with the new default", func() error {
		w, err := wi.Get(ctx, "old", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c, _ := w.Object["spec"].(map[string]interface{})["color"]; c != "blue" {
			return fmt.Errorf("color %v", c)
		}
		return nil
	})
}
