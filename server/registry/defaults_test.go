package registry

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestImagePullPolicyDefault(t *testing.T) {
	for _, tc := range []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"nginx:1.25", corev1.PullIfNotPresent},
		{"registry:5000/nginx", corev1.PullAlways},
		{"registry:5000/nginx:1.2", corev1.PullIfNotPresent},
		{"nginx@sha256:abcd", corev1.PullIfNotPresent},
		{"nginx:latest@sha256:abcd", corev1.PullAlways},
	} {
		c := corev1.Container{Image: tc.image}
		defaultContainer(&c)
		if c.ImagePullPolicy != tc.want {
			t.Errorf("%s: pull policy %s, want %s", tc.image, c.ImagePullPolicy, tc.want)
		}
	}
}

func TestPodDefaults(t *testing.T) {
	pod := goodPod("p")
	pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}}
	pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}},
		{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
		{Name: "scratch"},
	}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "", "pods"), pod))
	s := pod.Spec
	c := s.Containers[0]
	checks := []struct {
		name string
		ok   bool
	}{
		{"restartPolicy", s.RestartPolicy == corev1.RestartPolicyAlways},
		{"dnsPolicy", s.DNSPolicy == corev1.DNSClusterFirst},
		{"terminationGracePeriodSeconds", ptr.Deref(s.TerminationGracePeriodSeconds, 0) == 30},
		{"schedulerName", s.SchedulerName == corev1.DefaultSchedulerName},
		{"securityContext", s.SecurityContext != nil},
		{"enableServiceLinks", ptr.Deref(s.EnableServiceLinks, false)},
		{"priority", s.Priority != nil && *s.Priority == 0},
		{"preemptionPolicy", ptr.Deref(s.PreemptionPolicy, "") == corev1.PreemptLowerPriority},
		{"imagePullPolicy", c.ImagePullPolicy == corev1.PullIfNotPresent},
		{"terminationMessagePath", c.TerminationMessagePath == corev1.TerminationMessagePathDefault},
		{"terminationMessagePolicy", c.TerminationMessagePolicy == corev1.TerminationMessageReadFile},
		{"port protocol", c.Ports[0].Protocol == corev1.ProtocolTCP},
		{"probe timeout", c.LivenessProbe.TimeoutSeconds == 1},
		{"probe period", c.LivenessProbe.PeriodSeconds == 10},
		{"probe success", c.LivenessProbe.SuccessThreshold == 1},
		{"probe failure", c.LivenessProbe.FailureThreshold == 3},
		{"probe http path", c.LivenessProbe.HTTPGet.Path == "/" && c.LivenessProbe.HTTPGet.Scheme == corev1.URISchemeHTTP},
		{"requests from limits", c.Resources.Requests.Cpu().String() == "500m"},
		{"configMap defaultMode", ptr.Deref(s.Volumes[0].ConfigMap.DefaultMode, 0) == 0644},
		{"secret defaultMode", ptr.Deref(s.Volumes[1].Secret.DefaultMode, 0) == 0644},
		{"emptyDir", s.Volumes[2].EmptyDir != nil},
		{"phase Pending", pod.Status.Phase == corev1.PodPending},
		{"qos Burstable", pod.Status.QOSClass == corev1.PodQOSBurstable},
		{"generation 1", pod.Generation == 1},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("default %s not applied", c.name)
		}
	}
}

func TestWorkloadDefaults(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{Selector: sel, Template: goodTemplate()}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "apps", "deployments"), d))
	if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType ||
		d.Spec.Strategy.RollingUpdate.MaxSurge.String() != "25%" || d.Spec.Strategy.RollingUpdate.MaxUnavailable.String() != "25%" ||
		*d.Spec.RevisionHistoryLimit != 10 || *d.Spec.ProgressDeadlineSeconds != 600 || d.Generation != 1 {
		t.Errorf("deployment defaults: %+v", d.Spec)
	}
	if d.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways || d.Spec.Template.Spec.Containers[0].TerminationMessagePath == "" {
		t.Errorf("pod template defaults not applied")
	}
	if d.Spec.Template.Spec.EnableServiceLinks != nil {
		t.Errorf("enableServiceLinks is a Pod default, not a template default")
	}

	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "ds"}, Spec: appsv1.DaemonSetSpec{Selector: sel, Template: goodTemplate()}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "apps", "daemonsets"), ds))
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru.MaxUnavailable.IntValue() != 1 ||
		ru.MaxSurge.IntValue() != 0 || *ds.Spec.RevisionHistoryLimit != 10 || ds.Annotations[daemonSetTemplateGenerationKey] != "1" {
		t.Errorf("daemonset defaults: %+v %v", ds.Spec.UpdateStrategy, ds.Annotations)
	}

	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: appsv1.StatefulSetSpec{Selector: sel, Template: goodTemplate()}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "apps", "statefulsets"), sts))
	if *sts.Spec.Replicas != 1 || sts.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement ||
		*sts.Spec.UpdateStrategy.RollingUpdate.Partition != 0 || *sts.Spec.RevisionHistoryLimit != 10 ||
		sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted != appsv1.RetainPersistentVolumeClaimRetentionPolicyType ||
		sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		t.Errorf("statefulset defaults: %+v", sts.Spec)
	}

	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs"}, Spec: appsv1.ReplicaSetSpec{Selector: sel, Template: goodTemplate()}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "apps", "replicasets"), rs))
	if *rs.Spec.Replicas != 1 {
		t.Errorf("replicaset replicas %d", *rs.Spec.Replicas)
	}
}

func TestJobDefaultsAndSelector(t *testing.T) {
	tmpl := goodTemplate()
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi"}, Spec: batchv1.JobSpec{Template: tmpl}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "batch", "jobs"), j))
	s := j.Spec
	if *s.Parallelism != 1 || *s.Completions != 1 || *s.BackoffLimit != 6 || *s.CompletionMode != batchv1.NonIndexedCompletion ||
		*s.Suspend || *s.PodReplacementPolicy != batchv1.TerminatingOrFailed || *s.ManualSelector {
		t.Errorf("job defaults: %+v", s)
	}
	if s.Selector.MatchLabels[batchv1.ControllerUidLabel] != "uid-pi" {
		t.Errorf("selector %v", s.Selector)
	}
	for k, v := range map[string]string{batchv1.JobNameLabel: "pi", "job-name": "pi", batchv1.ControllerUidLabel: "uid-pi", "controller-uid": "uid-pi"} {
		if s.Template.Labels[k] != v {
			t.Errorf("template label %s=%q, want %q", k, s.Template.Labels[k], v)
		}
	}
	if j.Labels["app"] != "web" {
		t.Errorf("job labels not defaulted from template: %v", j.Labels)
	}

	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj"}, Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}}}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "batch", "cronjobs"), cj))
	if cj.Spec.ConcurrencyPolicy != batchv1.AllowConcurrent || *cj.Spec.Suspend || *cj.Spec.SuccessfulJobsHistoryLimit != 3 || *cj.Spec.FailedJobsHistoryLimit != 1 {
		t.Errorf("cronjob defaults: %+v", cj.Spec)
	}
}

func TestCoreDefaults(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "", "namespaces"), ns))
	if ns.Labels[corev1.LabelMetadataName] != "team-a" || ns.Status.Phase != corev1.NamespaceActive ||
		len(ns.Spec.Finalizers) != 1 || ns.Spec.Finalizers[0] != corev1.FinalizerKubernetes {
		t.Errorf("namespace defaults: %+v", ns)
	}

	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "", "secrets"), sec))
	if sec.Type != corev1.SecretTypeOpaque || string(sec.Data["k"]) != "v" || sec.StringData != nil {
		t.Errorf("secret defaults: %+v", sec)
	}

	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "", "persistentvolumeclaims"), pvc))
	if *pvc.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || pvc.Status.Phase != corev1.ClaimPending {
		t.Errorf("pvc defaults: %+v", pvc)
	}

	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "v"}, Spec: corev1.PersistentVolumeSpec{
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "", "persistentvolumes"), pv))
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || *pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem ||
		pv.Status.Phase != corev1.VolumePending {
		t.Errorf("pv defaults: %+v", pv)
	}

	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "e"}, Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "10.42.0.5"}}, Ports: []corev1.EndpointPort{{Port: 80}}}}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "", "endpoints"), ep))
	if ep.Subsets[0].Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("endpoints protocol not defaulted")
	}
}

func TestServiceDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  corev1.ServiceType
		etp  corev1.ServiceExternalTrafficPolicy
	}{
		{"cluster-ip", "", ""},
		{"node-port", corev1.ServiceTypeNodePort, corev1.ServiceExternalTrafficPolicyCluster},
		{"lb", corev1.ServiceTypeLoadBalancer, corev1.ServiceExternalTrafficPolicyCluster},
	} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: tc.name}, Spec: corev1.ServiceSpec{Type: tc.typ,
			Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}
		requireNoErr(t, prepareCreate(t, resourceFor(t, "", "services"), svc))
		s := svc.Spec
		if tc.typ == "" && s.Type != corev1.ServiceTypeClusterIP {
			t.Errorf("%s: type %q", tc.name, s.Type)
		}
		if s.SessionAffinity != corev1.ServiceAffinityNone || s.Ports[0].Protocol != corev1.ProtocolTCP ||
			s.Ports[0].TargetPort.IntValue() != 80 || *s.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster ||
			s.ExternalTrafficPolicy != tc.etp {
			t.Errorf("%s: defaults %+v", tc.name, s)
		}
		if tc.typ == corev1.ServiceTypeLoadBalancer && !ptr.Deref(s.AllocateLoadBalancerNodePorts, false) {
			t.Errorf("%s: allocateLoadBalancerNodePorts not defaulted", tc.name)
		}
	}
}
