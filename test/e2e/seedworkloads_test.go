package e2e

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// seedWorkloads are seed 002's workload manifests as a user applies them,
// with the images this machine has offline (busybox under the seeds'
// names would need their entrypoints) and a command that keeps each
// container running.
const seedWorkloads = `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high-priority
value: 1000000
globalDefault: false
description: "High priority for user-facing services"
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: low-priority
value: 10
globalDefault: false
description: "Low priority for batch jobs"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 5
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      priorityClassName: high-priority
      terminationGracePeriodSeconds: 1
      containers:
      - name: nginx
        image: nginx:1.25
        imagePullPolicy: IfNotPresent
        command: ["httpd", "-f", "-p", "80"]
        ports:
        - containerPort: 80
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web-pdb
spec:
  minAvailable: 3
  selector:
    matchLabels:
      app: web
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: fluentd
spec:
  selector:
    matchLabels:
      name: fluentd
  template:
    metadata:
      labels:
        name: fluentd
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: fluentd
        image: busybox:1.36
        imagePullPolicy: IfNotPresent
        command: ["sh", "-c", "ls /var/log >/dev/null && sleep 3600"]
        volumeMounts:
        - name: varlog
          mountPath: /var/log
      volumes:
      - name: varlog
        hostPath:
          path: /var/log
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: postgres
spec:
  serviceName: postgres
  replicas: 3
  selector:
    matchLabels:
      app: postgres
  template:
    metadata:
      labels:
        app: postgres
    spec:
      priorityClassName: low-priority
      terminationGracePeriodSeconds: 1
      containers:
      - name: postgres
        image: busybox:1.36
        imagePullPolicy: IfNotPresent
        command: ["sh", "-c", "echo $HOSTNAME > /var/lib/postgresql/data/owner && sleep 3600"]
        volumeMounts:
        - name: data
          mountPath: /var/lib/postgresql/data
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 10Gi
`

// TestSeedWorkloads applies seed 002's Deployment, DaemonSet, StatefulSet,
// PriorityClasses and PodDisruptionBudget with kubectl on a real node and
// waits with `kubectl rollout status` until each has rolled out: five web
// pods, one fluentd pod on the node, postgres-0..2 each with its own bound
// claim data-postgres-<i> of the default local-path class.
func TestSeedWorkloads(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	waitNodeReady(t, e, false)
	k := newKubectl(t, e)
	out := k.must(seedWorkloads, "apply", "-f", "-")
	for _, w := range []string{"deployment.apps/web created", "daemonset.apps/fluentd created",
		"statefulset.apps/postgres created", "poddisruptionbudget.policy/web-pdb created"} {
		if !strings.Contains(out, w) {
			t.Errorf("kubectl apply output lacks %q:\n%s", w, out)
		}
	}
	for _, obj := range []string{"deployment/web", "daemonset/fluentd", "statefulset/postgres"} {
		if out, err := k.run("", "rollout", "status", obj, "--timeout=150s"); err != nil {
			t.Fatalf("kubectl rollout status %s: %v\n%s\n%s", obj, err, out, k.must("", "get", "pods,pvc", "-o", "wide"))
		}
	}
	pvcs := k.must("", "get", "pvc", "-o", "custom-columns=NAME:.metadata.name,STATUS:.status.phase,CLASS:.spec.storageClassName", "--no-headers")
	bound := map[string]bool{}
	for _, line := range strings.Split(pvcs, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1] == "Bound" && f[2] == "local-path" {
			bound[f[0]] = true
		}
	}
	for _, n := range []string{"data-postgres-0", "data-postgres-1", "data-postgres-2"} {
		if !bound[n] {
			t.Errorf("claim %s not bound to a local-path volume:\n%s", n, pvcs)
		}
	}
	pdb, err := cs.PolicyV1().PodDisruptionBudgets("default").Get(context.Background(), "web-pdb", metav1.GetOptions{})
	if err != nil || pdb.Status.CurrentHealthy != 5 || pdb.Status.DisruptionsAllowed != 2 {
		t.Errorf("web-pdb status: %+v %v", pdb.Status, err)
	}
	k.must(seedWorkloads, "delete", "-f", "-", "--wait=true", "--timeout=120s")
}
