package kubectl

import (
	"testing"
	"time"
)

// testAutoscale: `kubectl autoscale deployment` creates an HPA that the
// controller acts on: the Deployment is raised to --min through its scale
// subresource, `kubectl get hpa` prints upstream's columns (the cpu target
// without a current value: no pod runs here) and `kubectl describe hpa`
// the conditions and the SuccessfulRescale event.
func testAutoscale(t *testing.T, k *kc) {
	ns := k.newNamespace(t)
	k.ok(t, "create", "deployment", "web", "-n", ns, "--image", "nginx:1.25", "--replicas", "1")
	out := k.ok(t, "autoscale", "deployment", "web", "-n", ns, "--min", "2", "--max", "5", "--cpu-percent", "50")
	contains(t, "autoscale", out, "horizontalpodautoscaler.autoscaling/web autoscaled")
	deadline := time.Now().Add(90 * time.Second)
	for k.ok(t, "get", "deployment", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}") != "2" {
		if time.Now().After(deadline) {
			t.Fatal("the HPA did not raise the Deployment to --min 2")
		}
		time.Sleep(time.Second)
	}
	out = k.ok(t, "get", "hpa", "-n", ns)
	contains(t, "get hpa", out, "NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE",
		"web", "Deployment/web", "cpu: <unknown>/50%")
	out = k.ok(t, "describe", "hpa", "web", "-n", ns)
	contains(t, "describe hpa", out, "Reference:", "Deployment/web", "Min replicas:", "Max replicas:", "AbleToScale",
		"SuccessfulRescale", "New size: 2; reason: Current number of replicas below Spec.MinReplicas")
}
