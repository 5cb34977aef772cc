package registry

import (
	"reflect"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validatePodSpec ports the essentials of ValidatePodSpec (pkg/apis/core/validation).
func validatePodSpec(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	vols, errs := validateVolumes(spec.Volumes, p.Child("volumes"))
	errs = append(errs, validateContainers(spec.Containers, vols, p.Child("containers"))...)
	errs = append(errs, validateInitContainers(spec.InitContainers, spec.Containers, vols, p.Child("initContainers"))...)
	errs = append(errs, validateEphemeralContainers(spec, vols, p.Child("ephemeralContainers"))...)
	for _, l := range []struct {
		name string
		cs   []corev1.Container
	}{{"containers", spec.Containers}, {"initContainers", spec.InitContainers}} {
		for i := range l.cs {
			errs = append(errs, validateResizePolicy(l.cs[i].ResizePolicy, spec.RestartPolicy, p.Child(l.name).Index(i).Child("resizePolicy"))...)
		}
	}
	errs = append(errs, oneOf(spec.RestartPolicy, p.Child("restartPolicy"),
		corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)...)
	errs = append(errs, oneOf(spec.DNSPolicy, p.Child("dnsPolicy"), corev1.DNSClusterFirstWithHostNet,
		corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone)...)
	if spec.DNSPolicy == corev1.DNSNone && (spec.DNSConfig == nil || len(spec.DNSConfig.Nameservers) == 0) {
		errs = append(errs, field.Required(p.Child("dnsConfig", "nameservers"), "must provide at least one DNS nameserver when DNSPolicy is set to None"))
	}
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, p.Child("nodeSelector"))...)
	if spec.ServiceAccountName != "" {
		errs = append(errs, dns1123Subdomain(spec.ServiceAccountName, p.Child("serviceAccountName"))...)
	}
	if spec.NodeName != "" {
		errs = append(errs, dns1123Subdomain(spec.NodeName, p.Child("nodeName"))...)
	}
	if spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, positive(*spec.ActiveDeadlineSeconds, p.Child("activeDeadlineSeconds"))...)
	}
	if spec.Hostname != "" {
		errs = append(errs, dns1123Label(spec.Hostname, p.Child("hostname"))...)
	}
	if spec.Subdomain != "" {
		errs = append(errs, dns1123Label(spec.Subdomain, p.Child("subdomain"))...)
	}
	if spec.PriorityClassName != "" {
		errs = append(errs, dns1123Subdomain(spec.PriorityClassName, p.Child("priorityClassName"))...)
	}
	for i, s := range spec.ImagePullSecrets {
		if s.Name == "" {
			errs = append(errs, field.Required(p.Child("imagePullSecrets").Index(i).Child("name"), ""))
		}
	}
	errs = append(errs, validateTolerations(spec.Tolerations, p.Child("tolerations"))...)
	errs = append(errs, validateAffinity(spec.Affinity, p.Child("affinity"))...)
	errs = append(errs, validateTopologySpread(spec.TopologySpreadConstraints, p.Child("topologySpreadConstraints"))...)
	if sc := spec.SecurityContext; sc != nil {
		errs = append(errs, validateSysctls(sc.Sysctls, p.Child("securityContext", "sysctls"))...)
	}
	return errs
}

// sysctlName is upstream's sysctl name format (segments split by dots or
// slashes).
var sysctlName = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

// validateSysctls checks the pod's sysctl names as upstream does.
func validateSysctls(sysctls []corev1.Sysctl, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, s := range sysctls {
		np := p.Index(i).Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(np, ""))
		case len(s.Name) > 253 || !sysctlName.MatchString(s.Name):
			errs = append(errs, field.Invalid(np, s.Name, "must have at most 253 characters and match regex "+sysctlName.String()))
		case seen.Has(s.Name):
			errs = append(errs, field.Duplicate(np, s.Name))
		}
		seen.Insert(s.Name)
	}
	return errs
}

func validateVolumes(vols []corev1.Volume, p *field.Path) (sets.Set[string], field.ErrorList) {
	names := sets.New[string]()
	var errs field.ErrorList
	for i, v := range vols {
		ip := p.Index(i)
		if v.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			errs = append(errs, dns1123Label(v.Name, ip.Child("name"))...)
		}
		if names.Has(v.Name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), v.Name))
		}
		names.Insert(v.Name)
		errs = append(errs, validateVolumeSource(&v.VolumeSource, ip)...)
	}
	return names, errs
}

func validateVolumeSource(vs *corev1.VolumeSource, p *field.Path) field.ErrorList {
	n := 0
	rv := reflect.ValueOf(vs).Elem()
	for i := 0; i < rv.NumField(); i++ {
		if f := rv.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			n++
		}
	}
	switch {
	case n == 0:
		return field.ErrorList{field.Required(p, "must specify a volume type")}
	case n > 1:
		return field.ErrorList{field.Forbidden(p, "may not specify more than 1 volume type")}
	}
	var errs field.ErrorList
	switch {
	case vs.ConfigMap != nil:
		if vs.ConfigMap.Name == "" {
			errs = append(errs, field.Required(p.Child("configMap", "name"), ""))
		}
		errs = append(errs, validateMode(vs.ConfigMap.DefaultMode, p.Child("configMap", "defaultMode"))...)
		errs = append(errs, validateKeyToPaths(vs.ConfigMap.Items, p.Child("configMap", "items"))...)
	case vs.Secret != nil:
		if vs.Secret.SecretName == "" {
			errs = append(errs, field.Required(p.Child("secret", "secretName"), ""))
		}
		errs = append(errs, validateMode(vs.Secret.DefaultMode, p.Child("secret", "defaultMode"))...)
		errs = append(errs, validateKeyToPaths(vs.Secret.Items, p.Child("secret", "items"))...)
	case vs.HostPath != nil:
		if vs.HostPath.Path == "" {
			errs = append(errs, field.Required(p.Child("hostPath", "path"), ""))
		}
	case vs.PersistentVolumeClaim != nil:
		if vs.PersistentVolumeClaim.ClaimName == "" {
			errs = append(errs, field.Required(p.Child("persistentVolumeClaim", "claimName"), ""))
		}
	case vs.Projected != nil:
		errs = append(errs, validateProjected(vs.Projected, p.Child("projected"))...)
	case vs.Image != nil:
		errs = append(errs, validateImageVolume(vs.Image, p.Child("image"))...)
	case vs.EmptyDir != nil:
		if l := vs.EmptyDir.SizeLimit; l != nil && l.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Child("emptyDir", "sizeLimit"), l.String(), "SizeLimit field must be a valid resource quantity"))
		}
	}
	return errs
}

func validateImageVolume(iv *corev1.ImageVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(iv.Reference) == "" {
		errs = append(errs, field.Required(p.Child("reference"), "must be set"))
	}
	switch iv.PullPolicy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		errs = append(errs, field.NotSupported(p.Child("pullPolicy"), iv.PullPolicy,
			[]corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}))
	}
	return errs
}

func validateMode(m *int32, p *field.Path) field.ErrorList {
	if m != nil && (*m > 0777 || *m < 0) {
		return field.ErrorList{field.Invalid(p, *m, "must be a number between 0 and 0777 (octal), both inclusive")}
	}
	return nil
}

func validateKeyToPaths(items []corev1.KeyToPath, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, it := range items {
		ip := p.Index(i)
		if it.Key == "" {
			errs = append(errs, field.Required(ip.Child("key"), ""))
		}
		if it.Path == "" {
			errs = append(errs, field.Required(ip.Child("path"), ""))
		}
		errs = append(errs, validateLocalDescendingPath(it.Path, ip.Child("path"))...)
		errs = append(errs, validateMode(it.Mode, ip.Child("mode"))...)
	}
	return errs
}

func validateContainers(cs []corev1.Container, vols sets.Set[string], p *field.Path) field.ErrorList {
	if len(cs) == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range cs {
		ip := p.Index(i)
		errs = append(errs, validateContainer(&cs[i], vols, ip)...)
		if names.Has(cs[i].Name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), cs[i].Name))
		}
		names.Insert(cs[i].Name)
		errs = append(errs, validateProbe(cs[i].LivenessProbe, true, ip.Child("livenessProbe"))...)
		errs = append(errs, validateProbe(cs[i].ReadinessProbe, false, ip.Child("readinessProbe"))...)
		errs = append(errs, validateProbe(cs[i].StartupProbe, true, ip.Child("startupProbe"))...)
		if cs[i].RestartPolicy != nil {
			errs = append(errs, field.Forbidden(ip.Child("restartPolicy"), "may not be set for non-init containers"))
		}
	}
	return errs
}

func validateInitContainers(ics, cs []corev1.Container, vols sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for _, c := range cs {
		names.Insert(c.Name)
	}
	for i := range ics {
		ip := p.Index(i)
		c := &ics[i]
		errs = append(errs, validateContainer(c, vols, ip)...)
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), c.Name))
		}
		names.Insert(c.Name)
		if c.RestartPolicy != nil {
			errs = append(errs, oneOf(*c.RestartPolicy, ip.Child("restartPolicy"), corev1.ContainerRestartPolicyAlways)...)
		}
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if !sidecar {
			for name, pr := range map[string]*corev1.Probe{"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe, "startupProbe": c.StartupProbe} {
				if pr != nil {
					errs = append(errs, field.Forbidden(ip.Child(name), "may not be set for init containers without restartPolicy=Always"))
				}
			}
		}
	}
	return errs
}

func validateContainer(c *corev1.Container, vols sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, dns1123Label(c.Name, p.Child("name"))...)
	}
	if c.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	errs = append(errs, oneOf(c.TerminationMessagePolicy, p.Child("terminationMessagePolicy"),
		corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError)...)
	errs = append(errs, oneOf(c.ImagePullPolicy, p.Child("imagePullPolicy"),
		corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)...)
	errs = append(errs, validateContainerPorts(c.Ports, p.Child("ports"))...)
	errs = append(errs, validateEnv(c.Env, p.Child("env"))...)
	errs = append(errs, validateEnvFrom(c.EnvFrom, p.Child("envFrom"))...)
	errs = append(errs, validateVolumeMounts(c.VolumeMounts, vols, p.Child("volumeMounts"))...)
	errs = append(errs, validateResources(&c.Resources, p.Child("resources"))...)
	return errs
}

func validateContainerPorts(ports []corev1.ContainerPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		ip := p.Index(i)
		if port.Name != "" {
			if ms := validation.IsValidPortName(port.Name); len(ms) != 0 {
				errs = append(errs, msgs(port.Name, ip.Child("name"), ms)...)
			} else if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(ip.Child("name"), port.Name))
			}
			names.Insert(port.Name)
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(ip.Child("containerPort"), ""))
		} else {
			errs = append(errs, validatePortNum(port.ContainerPort, ip.Child("containerPort"))...)
		}
		if port.HostPort != 0 {
			errs = append(errs, validatePortNum(port.HostPort, ip.Child("hostPort"))...)
		}
		errs = append(errs, oneOf(port.Protocol, ip.Child("protocol"), corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP)...)
	}
	return errs
}

func validateEnv(env []corev1.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range env {
		ip := p.Index(i)
		if ev.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			errs = append(errs, msgs(ev.Name, ip.Child("name"), validation.IsRelaxedEnvVarName(ev.Name))...)
		}
		if vf := ev.ValueFrom; vf != nil {
			n := 0
			for _, set := range []bool{vf.FieldRef != nil, vf.ResourceFieldRef != nil, vf.ConfigMapKeyRef != nil, vf.SecretKeyRef != nil, vf.FileKeyRef != nil} {
				if set {
					n++
				}
			}
			if n != 1 {
				errs = append(errs, field.Invalid(ip.Child("valueFrom"), "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
			}
			if ev.Value != "" {
				errs = append(errs, field.Invalid(ip.Child("valueFrom"), "", "may not be specified when `value` is not empty"))
			}
			if r := vf.ConfigMapKeyRef; r != nil && r.Key == "" {
				errs = append(errs, field.Required(ip.Child("valueFrom", "configMapKeyRef", "key"), ""))
			}
			if r := vf.SecretKeyRef; r != nil && r.Key == "" {
				errs = append(errs, field.Required(ip.Child("valueFrom", "secretKeyRef", "key"), ""))
			}
			if r := vf.FieldRef; r != nil && r.FieldPath == "" {
				errs = append(errs, field.Required(ip.Child("valueFrom", "fieldRef", "fieldPath"), ""))
			}
		}
	}
	return errs
}

func validateEnvFrom(envFrom []corev1.EnvFromSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ef := range envFrom {
		ip := p.Index(i)
		switch {
		case ef.ConfigMapRef != nil && ef.SecretRef != nil:
			errs = append(errs, field.Invalid(ip, "", "may not have more than one field specified at a time"))
		case ef.ConfigMapRef != nil && ef.ConfigMapRef.Name == "":
			errs = append(errs, field.Required(ip.Child("configMapRef", "name"), ""))
		case ef.SecretRef != nil && ef.SecretRef.Name == "":
			errs = append(errs, field.Required(ip.Child("secretRef", "name"), ""))
		case ef.ConfigMapRef == nil && ef.SecretRef == nil:
			errs = append(errs, field.Invalid(ip, "", "must specify one of: `configMapRef` or `secretRef`"))
		}
		if ef.Prefix != "" {
			errs = append(errs, msgs(ef.Prefix, ip.Child("prefix"), validation.IsRelaxedEnvVarName(ef.Prefix))...)
		}
	}
	return errs
}

func validateVolumeMounts(mounts []corev1.VolumeMount, vols sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := sets.New[string]()
	for i, m := range mounts {
		ip := p.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if !vols.Has(m.Name) {
			errs = append(errs, field.NotFound(ip.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(ip.Child("mountPath"), ""))
		}
		if paths.Has(m.MountPath) {
			errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths.Insert(m.MountPath)
		if m.SubPath != "" {
			errs = append(errs, validateLocalDescendingPath(m.SubPath, ip.Child("subPath"))...)
		}
		if m.SubPath != "" && m.SubPathExpr != "" {
			errs = append(errs, field.Invalid(ip.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
		}
	}
	return errs
}

func validateResources(r *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	lp, rp := p.Child("limits"), p.Child("requests")
	for name, q := range r.Limits {
		errs = append(errs, validateResourceQuantity(string(name), q, lp.Key(string(name)))...)
	}
	for name, q := range r.Requests {
		errs = append(errs, validateResourceQuantity(string(name), q, rp.Key(string(name)))...)
		if l, ok := r.Limits[name]; ok && q.Cmp(l) > 0 {
			errs = append(errs, field.Invalid(rp.Key(string(name)), q.String(),
				"must be less than or equal to "+string(name)+" limit of "+l.String()))
		}
	}
	return errs
}

func validateResourceQuantity(name string, q resource.Quantity, p *field.Path) field.ErrorList {
	errs := msgs(name, p, validation.IsQualifiedName(name))
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(p, q.String(), apivalidation.IsNegativeErrorMsg))
	}
	return errs
}

func validateProbe(pr *corev1.Probe, mustSucceedOnce bool, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	h := pr.ProbeHandler
	n := 0
	for _, set := range []bool{h.Exec != nil, h.HTTPGet != nil, h.TCPSocket != nil, h.GRPC != nil} {
		if set {
			n++
		}
	}
	var errs field.ErrorList
	switch {
	case n == 0:
		errs = append(errs, field.Required(p, "must specify a handler type"))
	case n > 1:
		errs = append(errs, field.Forbidden(p, "may not specify more than 1 handler type"))
	}
	if h.HTTPGet != nil {
		errs = append(errs, validatePortOrName(h.HTTPGet.Port.IntVal, h.HTTPGet.Port.StrVal, p.Child("httpGet", "port"))...)
	}
	if h.TCPSocket != nil {
		errs = append(errs, validatePortOrName(h.TCPSocket.Port.IntVal, h.TCPSocket.Port.StrVal, p.Child("tcpSocket", "port"))...)
	}
	errs = append(errs, nonNegative(int64(pr.InitialDelaySeconds), p.Child("initialDelaySeconds"))...)
	errs = append(errs, nonNegative(int64(pr.TimeoutSeconds), p.Child("timeoutSeconds"))...)
	errs = append(errs, nonNegative(int64(pr.PeriodSeconds), p.Child("periodSeconds"))...)
	errs = append(errs, nonNegative(int64(pr.SuccessThreshold), p.Child("successThreshold"))...)
	errs = append(errs, nonNegative(int64(pr.FailureThreshold), p.Child("failureThreshold"))...)
	if mustSucceedOnce && pr.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(p.Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
	}
	return errs
}

func validatePortOrName(port int32, name string, p *field.Path) field.ErrorList {
	if name != "" {
		return msgs(name, p, validation.IsValidPortName(name))
	}
	return validatePortNum(port, p)
}

func validateTolerations(ts []corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		ip := p.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, ip.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(ip.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(ip.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			errs = append(errs, msgs(t.Value, ip.Child("value"), validation.IsValidLabelValue(t.Value))...)
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(ip.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(ip.Child("operator"), t.Operator, []string{string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists)}))
		}
		if t.Effect != "" {
			errs = append(errs, oneOf(t.Effect, ip.Child("effect"), corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)...)
		}
	}
	return errs
}
