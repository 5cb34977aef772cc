package apf

import (
	"context"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func TestEnsure(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	fc := client.FlowcontrolV1()
	if err := Ensure(ctx, fc, nil); err != nil {
		t.Fatal(err)
	}
	fss, _ := fc.FlowSchemas().List(ctx, metav1.ListOptions{})
	pls, _ := fc.PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if want := len(bootstrap.MandatoryFlowSchemas) + len(bootstrap.SuggestedFlowSchemas); len(fss.Items) != want {
		t.Errorf("%d FlowSchemas, want %d", len(fss.Items), want)
	}
	if want := len(bootstrap.MandatoryPriorityLevelConfigurations) + len(bootstrap.SuggestedPriorityLevelConfigurations); len(pls.Items) != want {
		t.Errorf("%d priority levels, want %d", len(pls.Items), want)
	}

	// A changed mandatory object is reset; a suggested one the admin took
	// over (autoupdate-spec false) is left alone; a managed object that is
	// no bootstrap object goes; an unmanaged one stays.
	catchAll, _ := fc.FlowSchemas().Get(ctx, "catch-all", metav1.GetOptions{})
	catchAll.Spec.MatchingPrecedence = 9000
	_, _ = fc.FlowSchemas().Update(ctx, catchAll, metav1.UpdateOptions{})
	global, _ := fc.PriorityLevelConfigurations().Get(ctx, "global-default", metav1.GetOptions{})
	global.Spec.Limited.NominalConcurrencyShares = ptr.To(int32(99))
	global.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = "false"
	_, _ = fc.PriorityLevelConfigurations().Update(ctx, global, metav1.UpdateOptions{})
	for name, ann := range map[string]map[string]string{"old-managed": {flowcontrolv1.AutoUpdateAnnotationKey: "true"}, "mine": nil} {
		fs := bootstrap.SuggestedFlowSchemaGlobalDefault.DeepCopy()
		fs.Name, fs.Annotations = name, ann
		if _, err := fc.FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := Ensure(ctx, fc, nil); err != nil {
		t.Fatal(err)
	}
	if fs, _ := fc.FlowSchemas().Get(ctx, "catch-all", metav1.GetOptions{}); fs.Spec.MatchingPrecedence != 10000 {
		t.Errorf("catch-all precedence %d, want it reset to 10000", fs.Spec.MatchingPrecedence)
	}
	if pl, _ := fc.PriorityLevelConfigurations().Get(ctx, "global-default", metav1.GetOptions{}); *pl.Spec.Limited.NominalConcurrencyShares != 99 {
		t.Errorf("global-default shares %d, want the admin's 99", *pl.Spec.Limited.NominalConcurrencyShares)
	}
	if _, err := fc.FlowSchemas().Get(ctx, "old-managed", metav1.GetOptions{}); err == nil {
		t.Error("a managed non-bootstrap FlowSchema was kept")
	}
	if _, err := fc.FlowSchemas().Get(ctx, "mine", metav1.GetOptions{}); err != nil {
		t.Errorf("an unmanaged FlowSchema was removed: %v", err)
	}
	// Deleted mandatory objects come back.
	_ = fc.PriorityLevelConfigurations().Delete(ctx, "exempt", metav1.DeleteOptions{})
	if err := Ensure(ctx, fc, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := fc.PriorityLevelConfigurations().Get(ctx, "exempt", metav1.GetOptions{}); err != nil {
		t.Errorf("exempt not recreated: %v", err)
	}
}

// With listers, Ensure reads nothing from the API: no GET, no LIST beyond
// the informers' own, and it still resets a changed mandatory object.
func TestEnsureReadsListers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset()
	fc := client.FlowcontrolV1()
	f := informers.NewSharedInformerFactory(client, 0)
	inf := f.Flowcontrol().V1()
	l := &Listers{FlowSchemas: inf.FlowSchemas().Lister(), Levels: inf.PriorityLevelConfigurations().Lister()}
	f.StartWithContext(ctx)
	f.WaitForCacheSync(ctx.Done())
	if err := Ensure(ctx, fc, l); err != nil {
		t.Fatal(err)
	}
	want := len(bootstrap.MandatoryFlowSchemas) + len(bootstrap.SuggestedFlowSchemas)
	waitFor(t, func() bool { all, _ := l.FlowSchemas.List(labels.Everything()); return len(all) == want })
	catchAll, _ := fc.FlowSchemas().Get(ctx, "catch-all", metav1.GetOptions{})
	catchAll.Spec.MatchingPrecedence = 9000
	if _, err := fc.FlowSchemas().Update(ctx, catchAll, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { fs, _ := l.FlowSchemas.Get("catch-all"); return fs.Spec.MatchingPrecedence == 9000 })
	client.ClearActions()
	if err := Ensure(ctx, fc, l); err != nil {
		t.Fatal(err)
	}
	for _, a := range client.Actions() {
		if v := a.GetVerb(); v == "get" || v == "list" {
			t.Errorf("Ensure with listers called %s %s", v, a.GetResource().Resource)
		}
	}
	if fs, _ := fc.FlowSchemas().Get(ctx, "catch-all", metav1.GetOptions{}); fs.Spec.MatchingPrecedence != 10000 {
		t.Errorf("catch-all precedence %d, want it reset to 10000", fs.Spec.MatchingPrecedence)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
