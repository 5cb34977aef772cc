package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	testimages "github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

var opsWidgets = schema.GroupVersionResource{Group: "ops.example.com", Version: "v1", Resource: "widgets"}

// TestOperator: a controller-runtime operator (test/images/operator, built
// by the test) runs in a pod with its ServiceAccount limited by a
// ClusterRole, reconciles a custom resource into a ConfigMap it owns, keeps
// it in step with the spec, and writes the resource's status; deleting the
// resource lets the garbage collector remove the ConfigMap. On the same
// node, admission webhooks served by a pod reject and label ConfigMaps.
func TestOperator(t *testing.T) {
	requireHost(t)
	e := startClusterAt(t, dummyAddress(t))
	cs := e.server.Clientset
	ctx := context.Background()
	waitFor(t, 90*time.Second, "node "+e.node+" Ready", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, e.node, metav1.GetOptions{})
		return err == nil && nodeReady(n), err
	})
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := buildStatic(t, filepath.Join(root, "test", "images", "operator"), ".")
	err = testimages.WriteImage(filepath.Join(e.dataDir, "agent", "images", "operator.tar"),
		[]testimages.File{{Name: "operator", Mode: 0o755, Data: bin}}, testimages.Config{Entrypoint: []string{"/operator"}},
		"orch.test/operator:1")
	if err != nil {
		t.Fatal(err)
	}
	operatorCRD(t, e)
	operatorRBAC(t, e)
	_, err = cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "operator"}, Spec: corev1.PodSpec{
		NodeName: e.node, ServiceAccountName: "operator",
		Containers: []corev1.Container{{Name: "operator", Image: "orch.test/operator:1", ImagePullPolicy: corev1.PullNever}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(e.server.Config)
	if err != nil {
		t.Fatal(err)
	}
	w := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "ops.example.com/v1", "kind": "Widget",
		"metadata": map[string]interface{}{"name": "w1"}, "spec": map[string]interface{}{"message": "hello"}}}
	if _, err := dyn.Resource(opsWidgets).Namespace("default").Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMessage(t, e, "hello")
	waitFor(t, 60*time.Second, "the Widget's status", func() (bool, error) {
		got, err := dyn.Resource(opsWidgets).Namespace("default").Get(ctx, "w1", metav1.GetOptions{})
		ready, _, _ := unstructured.NestedBool(got.Object, "status", "ready")
		name, _, _ := unstructured.NestedString(got.Object, "status", "configMap")
		return err == nil && ready && name == "w1-config", nil
	})
	patch := []byte(`{"spec":{"message":"changed"}}`)
	if _, err := dyn.Resource(opsWidgets).Namespace("default").Patch(ctx, "w1", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMessage(t, e, "changed")
	if err := dyn.Resource(opsWidgets).Namespace("default").Delete(ctx, "w1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 120*time.Second, "the owned ConfigMap to be collected", func() (bool, error) {
		_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "w1-config", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	t.Run("WebhookServedByAPod", func(t *testing.T) { webhookServedByAPod(t, e) })
}

func waitMessage(t *testing.T, e *agentEnv, want string) {
	t.Helper()
	waitFor(t, 90*time.Second, fmt.Sprintf("ConfigMap w1-config with message %q", want), func() (bool, error) {
		cm, err := e.server.Clientset.CoreV1().ConfigMaps("default").Get(context.Background(), "w1-config", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].Kind != "Widget" {
			return false, fmt.Errorf("owner references %+v", cm.OwnerReferences)
		}
		return cm.Data["message"] == want, nil
	})
}

func operatorCRD(t *testing.T, e *agentEnv) {
	ext, err := apiextclient.NewForConfig(e.server.Config)
	if err != nil {
		t.Fatal(err)
	}
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.ops.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "ops.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"message": str}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"configMap": str, "ready": {Type: "boolean"}}},
					}}}}}}}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the CRD served", func() (bool, error) {
		dyn, err := dynamic.NewForConfig(e.server.Config)
		if err != nil {
			return false, err
		}
		_, err = dyn.Resource(opsWidgets).Namespace("default").List(context.Background(), metav1.ListOptions{})
		return err == nil, nil
	})
}

// operatorRBAC: the operator's ServiceAccount may work Widgets and
// ConfigMaps cluster-wide (controller-runtime caches cluster-wide), nothing more.
func operatorRBAC(t *testing.T, e *agentEnv) {
	ctx := context.Background()
	cs := e.server.Clientset
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "operator"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "widget-operator"},
		Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"get", "list", "watch", "update"}, APIGroups: []string{"ops.example.com"}, Resources: []string{"widgets"}},
			{Verbs: []string{"update", "patch"}, APIGroups: []string{"ops.example.com"}, Resources: []string{"widgets/status"}},
			{Verbs: all, APIGroups: []string{""}, Resources: []string{"configmaps"}},
			{Verbs: []string{"create", "patch"}, APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}},
		}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "widget-operator"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "widget-operator"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "operator", Namespace: "default"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}
