package registry

import (
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestEveryRowMatchesColumns(t *testing.T) {
	for _, r := range All(DefaultConfig()) {
		obj := r.New()
		mustMeta(obj).SetName("x")
		r.Strategy.Default(obj)
		cols, row := r.Strategy.TableColumns(), r.Strategy.TableRow(obj)
		if len(cols) != len(row) {
			t.Errorf("%s: %d columns, %d cells", r.Resource, len(cols), len(row))
		}
		for i, c := range cols {
			if c.Name == "Age" {
				if _, ok := row[i].(string); !ok {
					t.Errorf("%s: Age cell %T, want string", r.Resource, row[i])
				}
			}
		}
	}
}

func ago(d time.Duration) metav1.Time { return metav1.NewTime(time.Now().Add(-d)) }

func TestPodRows(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	base := func() *corev1.Pod {
		p := goodPod("web")
		p.CreationTimestamp = ago(3 * time.Minute)
		p.Spec.NodeName = "n1"
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIPs = []corev1.PodIP{{IP: "10.42.0.7"}}
		return p
	}
	for _, tc := range []struct {
		name string
		mut  func(*corev1.Pod)
		want []interface{}
	}{
		{"pending", func(p *corev1.Pod) {
			p.Spec.NodeName, p.Status.PodIPs, p.Status.Phase = "", nil, corev1.PodPending
		}, []interface{}{"web", "0/1", "Pending", "0", "3m", "<none>", "<none>", "<none>", "<none>"}},
		{"running", func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web", Ready: true, State: running}}
		}, []interface{}{"web", "1/1", "Running", "0", "3m", "10.42.0.7", "n1", "<none>", "<none>"}},
		{"crashloop", func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web", RestartCount: 4,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: ago(time.Minute)}}}}
		}, []interface{}{"web", "0/1", "CrashLoopBackOff", "4 (60s ago)", "3m", "10.42.0.7", "n1", "<none>", "<none>"}},
		{"completed", func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}}
		}, []interface{}{"web", "0/1", "Completed", "0", "3m", "10.42.0.7", "n1", "<none>", "<none>"}},
		{"terminating", func(p *corev1.Pod) {
			now := metav1.Now()
			p.DeletionTimestamp = &now
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web", Ready: true, State: running}}
		}, []interface{}{"web", "1/1", "Terminating", "0", "3m", "10.42.0.7", "n1", "<none>", "<none>"}},
		{"init", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
			p.Status.Phase = corev1.PodPending
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", State: running}}
		}, []interface{}{"web", "0/1", "Init:0/1", "0", "3m", "10.42.0.7", "n1", "<none>", "<none>"}},
		{"sidecar counted", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "side", Image: "b", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "side", Ready: true, Started: ptr.To(true), State: running}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web", Ready: true, State: running}}
		}, []interface{}{"web", "2/2", "Running", "0", "3m", "10.42.0.7", "n1", "<none>", "<none>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := base()
			tc.mut(p)
			got := resourceFor(t, "", "pods").Strategy.TableRow(p)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("row %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOtherRows(t *testing.T) {
	created := ago(2 * time.Hour)
	meta := metav1.ObjectMeta{Name: "x", Namespace: "default", CreationTimestamp: created}
	dep := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: goodTemplate()},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2}}
	svc := &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIPs: []string{"10.43.0.20"},
		Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}}}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "pi1", CreationTimestamp: created,
		Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}},
		Spec: corev1.NodeSpec{Unschedulable: true},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.1.10"}},
			NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: "v1.37.1-orch", OSImage: "Debian", KernelVersion: "6.1", Architecture: "arm64", ContainerRuntimeVersion: "containerd://1.6"}}}
	ev := &corev1.Event{ObjectMeta: meta, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-1"}, Reason: "Pulled",
		Type: "Normal", Message: "pulled ", FirstTimestamp: ago(5 * time.Minute), LastTimestamp: ago(time.Minute), Count: 2,
		Source: corev1.EventSource{Component: "kubelet", Host: "pi1"}}
	job := &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{Completions: ptr.To[int32](1), Template: goodTemplate()},
		Status: batchv1.JobStatus{Succeeded: 1, StartTime: &created, CompletionTime: ptr.To(ago(time.Hour)),
			Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}}
	for _, tc := range []struct {
		group, resource string
		obj             runtime.Object
		want            []interface{}
	}{
		{"apps", "deployments", dep, []interface{}{"x", "2/3", int64(3), int64(2), "120m", "web", "nginx:1.25", "app=web"}},
		{"", "services", svc, []interface{}{"x", "NodePort", "10.43.0.20", "<none>", "80:30080/TCP", "120m", "app=web"}},
		{"", "nodes", node, []interface{}{"pi1", "Ready,SchedulingDisabled", "control-plane", "120m", "v1.37.1-orch",
			"192.168.1.10", "<none>", "Debian", "6.1 (arm64)", "containerd://1.6"}},
		{"", "events", ev, []interface{}{"60s", "Normal", "Pulled", "pod/web-1", "", "kubelet, pi1", "pulled", "5m", int64(2), "x"}},
		{"batch", "jobs", job, []interface{}{"x", "Complete", "1/1", "60m", "120m", "web", "nginx:1.25", "<none>"}},
		{"", "namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", CreationTimestamp: created},
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}, []interface{}{"x", "Active", "120m"}},
		{"", "secrets", &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": nil}},
			[]interface{}{"x", "Opaque", int64(1), "120m"}},
		{"", "configmaps", &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"a": "", "b": ""}},
			[]interface{}{"x", int64(2), "120m"}},
		{"", "limitranges", &corev1.LimitRange{ObjectMeta: meta}, []interface{}{"x", created.UTC().Format(time.RFC3339)}},
	} {
		got := resourceFor(t, tc.group, tc.resource).Strategy.TableRow(tc.obj)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s row %#v\nwant %#v", tc.resource, got, tc.want)
		}
	}
}

func TestFieldSets(t *testing.T) {
	pod := goodPod("p")
	pod.Namespace = "ns"
	pod.Spec.NodeName = "n1"
	pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	pod.Spec.SchedulerName = "default-scheduler"
	pod.Spec.ServiceAccountName = "default"
	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIPs = []corev1.PodIP{{IP: "10.42.0.9"}}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}, InvolvedObject: corev1.ObjectReference{
		Kind: "Pod", Namespace: "ns", Name: "p", UID: "u1", APIVersion: "v1", ResourceVersion: "7", FieldPath: "spec.containers{web}"},
		Reason: "Started", ReportingController: "kubelet", Source: corev1.EventSource{Component: "kubelet"}, Type: "Normal"}
	for _, tc := range []struct {
		group, resource string
		obj             runtime.Object
		want            fields.Set
	}{
		{"", "pods", pod, fields.Set{"metadata.name": "p", "metadata.namespace": "ns", "spec.nodeName": "n1",
			"spec.restartPolicy": "Always", "spec.schedulerName": "default-scheduler", "spec.serviceAccountName": "default",
			"spec.hostNetwork": "false", "status.phase": "Running", "status.podIP": "10.42.0.9", "status.nominatedNodeName": ""}},
		{"", "events", ev, fields.Set{"metadata.name": "e", "metadata.namespace": "ns", "involvedObject.kind": "Pod",
			"involvedObject.namespace": "ns", "involvedObject.name": "p", "involvedObject.uid": "u1", "involvedObject.apiVersion": "v1",
			"involvedObject.resourceVersion": "7", "involvedObject.fieldPath": "spec.containers{web}", "reason": "Started",
			"reportingComponent": "kubelet", "source": "kubelet", "type": "Normal"}},
		// an events.k8s.io event has no source: reportingController stands in (upstream)
		{"", "events", &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e2", Namespace: "ns"}, ReportingController: "ctl"},
			fields.Set{"metadata.name": "e2", "metadata.namespace": "ns", "involvedObject.kind": "", "involvedObject.namespace": "",
				"involvedObject.name": "", "involvedObject.uid": "", "involvedObject.apiVersion": "", "involvedObject.resourceVersion": "",
				"involvedObject.fieldPath": "", "reason": "", "reportingComponent": "ctl", "source": "ctl", "type": ""}},
		{"", "secrets", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Type: corev1.SecretTypeTLS},
			fields.Set{"metadata.name": "s", "metadata.namespace": "ns", "type": "kubernetes.io/tls"}},
		{"", "nodes", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NodeSpec{Unschedulable: true}},
			fields.Set{"metadata.name": "n", "metadata.namespace": "", "spec.unschedulable": "true"}},
		{"", "namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}},
			fields.Set{"metadata.name": "a", "metadata.namespace": "", "status.phase": "Terminating"}},
		{"batch", "jobs", &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns"}, Status: batchv1.JobStatus{Succeeded: 2}},
			fields.Set{"metadata.name": "j", "metadata.namespace": "ns", "status.successful": "2"}},
		{"apps", "replicasets", &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, Status: appsv1.ReplicaSetStatus{Replicas: 3}},
			fields.Set{"metadata.name": "r", "metadata.namespace": "ns", "status.replicas": "3"}},
		{"", "services", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}},
			fields.Set{"metadata.name": "s", "metadata.namespace": "ns"}},
		{"", "configmaps", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}},
			fields.Set{"metadata.name": "c", "metadata.namespace": "ns"}},
	} {
		got := resourceFor(t, tc.group, tc.resource).Strategy.Fields(tc.obj)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s fields %v\nwant %v", tc.resource, got, tc.want)
		}
	}
}

func TestResourceTable(t *testing.T) {
	want := map[string]struct {
		short      string
		all        bool
		namespaced bool
		status     bool
		scale      bool
	}{
		"pods": {"po", true, true, true, false}, "services": {"svc", true, true, true, false},
		"namespaces": {"ns", false, false, true, false}, "configmaps": {"cm", false, true, false, false},
		"endpoints": {"ep", false, true, false, false}, "nodes": {"no", false, false, true, false},
		"serviceaccounts": {"sa", false, true, false, false}, "persistentvolumes": {"pv", false, false, true, false},
		"persistentvolumeclaims": {"pvc", false, true, true, false}, "resourcequotas": {"quota", false, true, true, false},
		"limitranges": {"limits", false, true, false, false}, "deployments": {"deploy", true, true, true, true},
		"replicasets": {"rs", true, true, true, true}, "daemonsets": {"ds", true, true, true, false},
		"statefulsets": {"sts", true, true, true, true}, "jobs": {"", true, true, true, false},
		"cronjobs": {"cj", true, true, true, false}, "networkpolicies": {"netpol", false, true, false, false},
		"ingresses": {"ing", false, true, true, false}, "poddisruptionbudgets": {"pdb", false, true, true, false},
		"priorityclasses": {"pc", false, false, false, false}, "storageclasses": {"sc", false, false, false, false},
		"leases": {"", false, true, false, false}, "endpointslices": {"", false, true, false, false},
		"secrets": {"", false, true, false, false},
	}
	for _, r := range All(Config{}) {
		w, ok := want[r.Resource]
		if !ok {
			continue
		}
		short := ""
		if len(r.ShortNames) > 0 {
			short = r.ShortNames[0]
		}
		if short != w.short || (len(r.Categories) > 0) != w.all || r.Namespaced != w.namespaced || r.HasStatus != w.status || (r.Scale != nil) != w.scale {
			t.Errorf("%s: %+v", r.Resource, r)
		}
	}
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}, Status: appsv1.DeploymentStatus{Replicas: 1}}
	sc := resourceFor(t, "apps", "deployments").Scale
	if spec, st, sel := sc.Get(d); spec != 2 || st != 1 || sel != "app=web" {
		t.Errorf("scale get %d %d %q", spec, st, sel)
	}
	sc.Set(d, 5)
	if *d.Spec.Replicas != 5 {
		t.Errorf("scale set")
	}
}
