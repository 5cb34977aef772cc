package envvars

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServiceEnv builds the service link variables for a pod in namespace ns,
// as the kubelet's getServiceEnvVarMap does: the "kubernetes" Service of the
// default namespace always (KUBERNETES_SERVICE_HOST/PORT, needed by
// in-cluster clients), and every Service of ns with a cluster IP when
// enableServiceLinks (nil = true, the API default). Pass the result as
// Inputs.ServiceEnv.
func ServiceEnv(services []*corev1.Service, ns string, enableServiceLinks *bool) map[string]string {
	links := enableServiceLinks == nil || *enableServiceLinks
	picked := map[string]*corev1.Service{}
	for _, svc := range services {
		ip := svc.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone || len(svc.Spec.Ports) == 0 {
			continue
		}
		if svc.Namespace == metav1.NamespaceDefault && svc.Name == "kubernetes" {
			if _, ok := picked[svc.Name]; !ok {
				picked[svc.Name] = svc
			}
		} else if svc.Namespace == ns && links {
			picked[svc.Name] = svc
		}
	}
	out := map[string]string{}
	for _, svc := range picked {
		serviceVars(out, svc)
	}
	return out
}

func envName(s string) string {
	return strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}

// serviceVars adds FOO_SERVICE_HOST, FOO_SERVICE_PORT[_NAME] and the
// docker-link style FOO_PORT* variables of one Service.
func serviceVars(out map[string]string, svc *corev1.Service) {
	prefix := envName(svc.Name)
	ip := svc.Spec.ClusterIP
	out[prefix+"_SERVICE_HOST"] = ip
	out[prefix+"_SERVICE_PORT"] = strconv.Itoa(int(svc.Spec.Ports[0].Port))
	for i, sp := range svc.Spec.Ports {
		port := strconv.Itoa(int(sp.Port))
		if sp.Name != "" {
			out[prefix+"_SERVICE_PORT_"+envName(sp.Name)] = port
		}
		proto := string(corev1.ProtocolTCP)
		if sp.Protocol != "" {
			proto = string(sp.Protocol)
		}
		url := fmt.Sprintf("%s://%s", strings.ToLower(proto), net.JoinHostPort(ip, port))
		if i == 0 {
			out[prefix+"_PORT"] = url
		}
		pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, sp.Port, strings.ToUpper(proto))
		out[pp] = url
		out[pp+"_PROTO"] = strings.ToLower(proto)
		out[pp+"_PORT"] = port
		out[pp+"_ADDR"] = ip
	}
}
