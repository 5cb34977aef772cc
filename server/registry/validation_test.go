package registry

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

type validationCase struct {
	name     string
	group    string
	resource string
	obj      func() runtime.Object
	wantType field.ErrorType // "" = valid
	wantPath string
}

func TestValidateCreate(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	pod := func(mut func(*corev1.Pod)) func() runtime.Object {
		return func() runtime.Object { p := goodPod("web-1"); mut(p); return p }
	}
	deploy := func(mut func(*appsv1.Deployment)) func() runtime.Object {
		return func() runtime.Object {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{Selector: sel.DeepCopy(), Template: goodTemplate()}}
			mut(d)
			return d
		}
	}
	svc := func(mut func(*corev1.Service)) func() runtime.Object {
		return func() runtime.Object {
			s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}
			mut(s)
			return s
		}
	}
	cm := func(mut func(*corev1.ConfigMap)) func() runtime.Object {
		return func() runtime.Object {
			c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"a.conf": "x"}}
			mut(c)
			return c
		}
	}
	cases := podCases(pod)
	cases = append(cases, workloadCases(deploy)...)
	cases = append(cases, serviceCases(svc)...)
	cases = append(cases, otherCases(cm)...)
	runValidationCases(t, cases)
}

func podCases(pod func(func(*corev1.Pod)) func() runtime.Object) []validationCase {
	none := func(*corev1.Pod) {}
	return []validationCase{
		{"pod ok", "", "pods", pod(none), "", ""},
		{"pod bad name", "", "pods", pod(func(p *corev1.Pod) { p.Name = "Web_1" }), field.ErrorTypeInvalid, "metadata.name"},
		{"pod no name", "", "pods", pod(func(p *corev1.Pod) { p.Name = "" }), field.ErrorTypeRequired, "metadata.name"},
		{"pod bad label", "", "pods", pod(func(p *corev1.Pod) { p.Labels["bad key!"] = "x" }), field.ErrorTypeInvalid, "metadata.labels"},
		{"pod bad annotation", "", "pods", pod(func(p *corev1.Pod) { p.Annotations = map[string]string{"a/b/c": "x"} }), field.ErrorTypeInvalid, "metadata.annotations"},
		{"pod no containers", "", "pods", pod(func(p *corev1.Pod) { p.Spec.Containers = nil }), field.ErrorTypeRequired, "spec.containers"},
		{"pod no image", "", "pods", pod(func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }), field.ErrorTypeRequired, "spec.containers[0].image"},
		{"pod bad container name", "", "pods", pod(func(p *corev1.Pod) { p.Spec.Containers[0].Name = "Web" }), field.ErrorTypeInvalid, "spec.containers[0].name"},
		{"pod duplicate container", "", "pods", pod(func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0]) }), field.ErrorTypeDuplicate, "spec.containers[1].name"},
		{"pod port range", "", "pods", pod(func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 70000 }), field.ErrorTypeInvalid, "spec.containers[0].ports[0].containerPort"},
		{"pod port protocol", "", "pods", pod(func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].Protocol = "HTTP" }), field.ErrorTypeNotSupported, "spec.containers[0].ports[0].protocol"},
		{"pod mount unknown volume", "", "pods", pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}), field.ErrorTypeNotFound, "spec.containers[0].volumeMounts[0].name"},
		{"pod two volume sources", "", "pods", pod(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}, HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}}}
		}), field.ErrorTypeForbidden, "spec.volumes[0]"},
		{"pod restart policy", "", "pods", pod(func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" }), field.ErrorTypeNotSupported, "spec.restartPolicy"},
		{"pod requests over limits", "", "pods", pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
				Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}
		}), field.ErrorTypeInvalid, "spec.containers[0].resources.requests[memory]"},
		{"pod env name", "", "pods", pod(func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A=B"}} }), field.ErrorTypeInvalid, "spec.containers[0].env[0].name"},
		{"pod probe handler", "", "pods", pod(func(p *corev1.Pod) { p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{} }), field.ErrorTypeRequired, "spec.containers[0].readinessProbe"},
		{"pod toleration", "", "pods", pod(func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"}}
		}), field.ErrorTypeInvalid, "spec.tolerations[0].operator"},
		{"pod node affinity operator", "", "pods", pod(func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: "Near"}}}}}}}
		}), field.ErrorTypeInvalid, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator"},
		{"pod spread skew", "", "pods", pod(func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 0, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule}}
		}), field.ErrorTypeInvalid, "spec.topologySpreadConstraints[0].maxSkew"},
		{"pod ephemeral on create", "", "pods", pod(func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg", Image: "busybox"}}}
		}), field.ErrorTypeForbidden, "spec.ephemeralContainers"},
	}
}

func workloadCases(deploy func(func(*appsv1.Deployment)) func() runtime.Object) []validationCase {
	return []validationCase{
		{"deployment ok", "apps", "deployments", deploy(func(*appsv1.Deployment) {}), "", ""},
		{"deployment selector mismatch", "apps", "deployments", deploy(func(d *appsv1.Deployment) { d.Spec.Selector.MatchLabels["app"] = "db" }), field.ErrorTypeInvalid, "spec.template.metadata.labels"},
		{"deployment no selector", "apps", "deployments", deploy(func(d *appsv1.Deployment) { d.Spec.Selector = nil }), field.ErrorTypeRequired, "spec.selector"},
		{"deployment empty selector", "apps", "deployments", deploy(func(d *appsv1.Deployment) { d.Spec.Selector = &metav1.LabelSelector{} }), field.ErrorTypeInvalid, "spec.selector"},
		{"deployment negative replicas", "apps", "deployments", deploy(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](-1) }), field.ErrorTypeInvalid, "spec.replicas"},
		{"deployment restart never", "apps", "deployments", deploy(func(d *appsv1.Deployment) { d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever }), field.ErrorTypeNotSupported, "spec.template.spec.restartPolicy"},
		{"deployment template image", "apps", "deployments", deploy(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "" }), field.ErrorTypeRequired, "spec.template.spec.containers[0].image"},
		{"deployment recreate with rolling", "apps", "deployments", deploy(func(d *appsv1.Deployment) {
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{}}
		}), field.ErrorTypeForbidden, "spec.strategy.rollingUpdate"},
	}
}

func serviceCases(svc func(func(*corev1.Service)) func() runtime.Object) []validationCase {
	return []validationCase{
		{"service ok", "", "services", svc(func(*corev1.Service) {}), "", ""},
		{"service headless no ports", "", "services", svc(func(s *corev1.Service) { s.Spec.ClusterIP = "None"; s.Spec.Ports = nil }), "", ""},
		{"service external name", "", "services", svc(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeExternalName
			s.Spec.ExternalName = "db.example.com"
			s.Spec.Ports = nil
		}), "", ""},
		{"service name not label", "", "services", svc(func(s *corev1.Service) { s.Name = "web.svc" }), field.ErrorTypeInvalid, "metadata.name"},
		{"service no ports", "", "services", svc(func(s *corev1.Service) { s.Spec.Ports = nil }), field.ErrorTypeRequired, "spec.ports"},
		{"service unnamed ports", "", "services", svc(func(s *corev1.Service) { s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: 443}) }), field.ErrorTypeRequired, "spec.ports[0].name"},
		{"service duplicate port names", "", "services", svc(func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "http", Port: 81}}
		}), field.ErrorTypeDuplicate, "spec.ports[1].name"},
		{"service port range", "", "services", svc(func(s *corev1.Service) { s.Spec.Ports[0].Port = 0 }), field.ErrorTypeInvalid, "spec.ports[0].port"},
		{"service bad type", "", "services", svc(func(s *corev1.Service) { s.Spec.Type = "Magic" }), field.ErrorTypeNotSupported, "spec.type"},
		{"service nodePort on ClusterIP", "", "services", svc(func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30080 }), field.ErrorTypeForbidden, "spec.ports[0].nodePort"},
		{"service nodePort out of range", "", "services", svc(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = 8080
		}), field.ErrorTypeInvalid, "spec.ports[0].nodePort"},
		{"service clusterIP garbage", "", "services", svc(func(s *corev1.Service) { s.Spec.ClusterIP = "ten" }), field.ErrorTypeInvalid, "spec.clusterIPs[0]"},
		{"service headless NodePort", "", "services", svc(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort; s.Spec.ClusterIP = "None" }), field.ErrorTypeInvalid, "spec.clusterIPs[0]"},
	}
}

func otherCases(cm func(func(*corev1.ConfigMap)) func() runtime.Object) []validationCase {
	return []validationCase{
		{"configmap ok", "", "configmaps", cm(func(*corev1.ConfigMap) {}), "", ""},
		{"configmap bad key", "", "configmaps", cm(func(c *corev1.ConfigMap) { c.Data["a/b"] = "x" }), field.ErrorTypeInvalid, "data[a/b]"},
		{"configmap dup binary key", "", "configmaps", cm(func(c *corev1.ConfigMap) { c.BinaryData = map[string][]byte{"a.conf": {1}} }), field.ErrorTypeInvalid, "data[a.conf]"},
		{"configmap too big", "", "configmaps", cm(func(c *corev1.ConfigMap) { c.Data["big"] = strings.Repeat("x", maxDataSize+1) }), field.ErrorTypeTooLong, "[]"}, // upstream reports field.NewPath("")
		{"secret tls missing key", "", "secrets", func() runtime.Object {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls"}, Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": {1}}}
		}, field.ErrorTypeRequired, "data[tls.key]"},
		{"secret bad key", "", "secrets", func() runtime.Object {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"a b": {1}}}
		}, field.ErrorTypeInvalid, "data[a b]"},
		{"namespace name not label", "", "namespaces", func() runtime.Object {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team.a"}}
		}, field.ErrorTypeInvalid, "metadata.name"},
		{"node taint effect", "", "nodes", func() runtime.Object {
			return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Effect: "Sometimes"}}}}
		}, field.ErrorTypeNotSupported, "spec.taints[0].effect"},
		{"node ok with dotted name", "", "nodes", func() runtime.Object {
			return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "pi-1.lan"}}
		}, "", ""},
		{"event namespace mismatch", "", "events", func() runtime.Object {
			return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "other", Name: "p"}}
		}, field.ErrorTypeInvalid, "involvedObject.namespace"},
		{"pvc no storage", "", "persistentvolumeclaims", func() runtime.Object {
			return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}}
		}, field.ErrorTypeRequired, "spec.resources[storage]"},
		{"pvc no access modes", "", "persistentvolumeclaims", func() runtime.Object {
			return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: corev1.PersistentVolumeClaimSpec{
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
		}, field.ErrorTypeRequired, "spec.accessModes"},
		{"job restart always", "batch", "jobs", func() runtime.Object {
			return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}, Spec: batchv1.JobSpec{Template: goodTemplate()}}
		}, field.ErrorTypeNotSupported, "spec.template.spec.restartPolicy"},
		{"cronjob bad schedule", "batch", "cronjobs", func() runtime.Object {
			tmpl := goodTemplate()
			tmpl.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: batchv1.CronJobSpec{Schedule: "61 * * * *",
				JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}}}}
		}, field.ErrorTypeInvalid, "spec.schedule"},
		{"ingress no path type", "networking.k8s.io", "ingresses", func() runtime.Object {
			return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "i"}, Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
				Host: "web.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: "/", Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}}
		}, field.ErrorTypeRequired, "spec.rules[0].http.paths[0].pathType"},
		{"cluster-scoped with namespace", "", "nodes", func() runtime.Object {
			return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Namespace: "default"}}
		}, field.ErrorTypeForbidden, "metadata.namespace"},
	}
}

func runValidationCases(t *testing.T, cases []validationCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := resourceFor(t, tc.group, tc.resource)
			obj := tc.obj()
			keepNS := mustMeta(obj).GetNamespace() != ""
			errs := prepareCreateKeepingNamespace(t, r, obj, keepNS)
			if tc.wantType == "" {
				requireNoErr(t, errs)
				return
			}
			requireErr(t, errs, tc.wantType, tc.wantPath)
		})
	}
}

func prepareCreateKeepingNamespace(t *testing.T, r *Resource, obj runtime.Object, keep bool) field.ErrorList {
	if !keep && !r.Namespaced {
		mustMeta(obj).SetNamespace("")
	}
	return prepareCreate(t, r, obj)
}

// Typical manifests users bring must pass as they do upstream.
func TestTypicalManifestsValid(t *testing.T) {
	tmpl := goodTemplate()
	tmpl.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: appsv1.StatefulSetSpec{
		ServiceName: "db", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: tmpl,
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "apps", "statefulsets"), sts))
	if *sts.Spec.VolumeClaimTemplates[0].Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Errorf("claim template volumeMode not defaulted")
	}

	bad := sts.DeepCopy()
	bad.Name = "db.primary" // statefulset names are DNS labels
	bad.UID = ""
	requireErr(t, prepareCreate(t, resourceFor(t, "apps", "statefulsets"), bad), field.ErrorTypeInvalid, "metadata.name")

	headless := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: corev1.ServiceSpec{ClusterIP: "None",
		Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "pg", Port: 5432}}}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "", "services"), headless))

	cron := goodTemplate()
	cron.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "backup"}, Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *",
		TimeZone: ptr.To("UTC"), JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: cron}}}}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "batch", "cronjobs"), cj))
}
