package schedloop

import (
	"context"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit/kittest"
	"github.com/orch/orch/server/scheduler"
)

// startShared starts the real API server and the loop on a shared
// kit.Context, as the server runs it.
func startShared(t *testing.T) kubernetes.Interface {
	t.Helper()
	client, _ := kittest.Run(t, NewShared, kittest.Logger(zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))))
	return client
}

func TestPreemptionThroughAPI(t *testing.T) {
	client := startShared(t)
	ctx := context.Background()
	create(t, client, node("n1", "2"))
	victim := pod("victim", "1500m")
	victim.UID = ""
	victim.Spec.NodeName = "n1"
	victim.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
	create(t, client, victim)
	if _, err := client.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vip := pod("vip", "1")
	vip.UID = ""
	vip.Spec.PriorityClassName = "high"
	create(t, client, vip)
	waitFor(t, "victim deleted", func() bool {
		_, err := client.CoreV1().Pods("default").Get(ctx, "victim", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	waitFor(t, "vip bound to n1 with nominatedNodeName", func() bool {
		p := get(t, client, "vip")
		return p.Spec.NodeName == "n1" && p.Status.NominatedNodeName == "n1"
	})
	waitFor(t, "Preempted event", func() bool {
		evs, _ := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == "victim" && e.Reason == EventPreempted {
				return true
			}
		}
		return false
	})
}

func TestVolumesThroughAPI(t *testing.T) {
	client := startShared(t)
	ctx := context.Background()
	n2 := node("n2", "2")
	n2.Labels = map[string]string{corev1.LabelHostname: "n2"}
	create(t, client, node("n1", "2"), n2)
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	if _, err := client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local-path"},
		Provisioner: "orch.io/local-path", VolumeBindingMode: &wffc}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createClaim(t, client, "data", "local-path", "")
	p := pod("app", "100m")
	p.UID = ""
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	create(t, client, p)
	waitFor(t, "app bound and claim annotated with its node", func() bool {
		node := get(t, client, "app").Spec.NodeName
		c, err := client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
		return err == nil && node != "" && c.Annotations[scheduler.AnnSelectedNode] == node
	})

	// A missing claim: the pod waits, then follows its PV to n2.
	q := p.DeepCopy()
	q.Name, q.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "late", "late"
	q.ResourceVersion = ""
	create(t, client, q)
	msg := `0/2 nodes are available: persistentvolumeclaim "late" not found. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.`
	waitFor(t, "FailedScheduling for the missing claim", func() bool { return eventFor(t, client, "late", EventFailedScheduling, msg) })
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-late"}, Spec: corev1.PersistentVolumeSpec{
		StorageClassName: "manual", Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/x"}},
		NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"n2"}}}}}}}}}
	if _, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createClaim(t, client, "late", "manual", "pv-late")
	waitFor(t, "late bound to n2", func() bool { return get(t, client, "late").Spec.NodeName == "n2" })
}

func createClaim(t *testing.T, client kubernetes.Interface, name, class, volume string) {
	t.Helper()
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class), VolumeName: volume,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if _, err := client.CoreV1().PersistentVolumeClaims("default").Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
