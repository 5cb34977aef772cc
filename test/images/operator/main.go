// Command operator is a test workload built with controller-runtime: it
// reconciles each Widget (ops.example.com/v1) into a ConfigMap
// <name>-config holding spec.message, owned by the Widget, and records the
// ConfigMap's name and ready=true in the Widget's status. It runs in a pod
// with nothing but its ServiceAccount (rest.InClusterConfig).
package main

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

var widgetGVK = schema.GroupVersionKind{Group: "ops.example.com", Version: "v1", Kind: "Widget"}

type reconciler struct{ c client.Client }

func (r reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGVK)
	if err := r.c.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	msg, _, _ := unstructured.NestedString(w.Object, "spec", "message")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: req.Name + "-config", Namespace: req.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.c, cm, func() error {
		cm.Data = map[string]string{"message": msg}
		return controllerutil.SetControllerReference(w, cm, r.c.Scheme())
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	if name, _, _ := unstructured.NestedString(w.Object, "status", "configMap"); name == cm.Name {
		return ctrl.Result{}, nil
	}
	_ = unstructured.SetNestedField(w.Object, cm.Name, "status", "configMap")
	_ = unstructured.SetNestedField(w.Object, true, "status", "ready")
	err = r.c.Status().Update(ctx, w)
	if apierrors.IsConflict(err) {
		return ctrl.Result{Requeue: true}, nil
	}
	return ctrl.Result{}, err
}

func main() {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		fmt.Println("MANAGER ERR", err)
		os.Exit(1)
	}
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGVK)
	err = ctrl.NewControllerManagedBy(mgr).For(w).Owns(&corev1.ConfigMap{}).Complete(reconciler{c: mgr.GetClient()})
	if err != nil {
		fmt.Println("CONTROLLER ERR", err)
		os.Exit(1)
	}
	fmt.Println("OPERATOR STARTED")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Println("RUN ERR", err)
		os.Exit(1)
	}
}
