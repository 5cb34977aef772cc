package kubelet

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/agent/images"
)

// dockerConfig is the content of a kubernetes.io/dockerconfigjson secret
// (or, without the "auths" wrapper, of a kubernetes.io/dockercfg one).
type dockerConfig struct {
	Auths map[string]images.AuthConfig `json:"auths"`
}

// registryHost is the registry of an image reference, as containerd names
// it: docker.io for Docker Hub.
func registryHost(ref string) string {
	name, err := images.Normalize(ref)
	if err != nil {
		return ""
	}
	host, _, _ := strings.Cut(name, "/")
	return host
}

// sameRegistry matches a key of a docker config ("https://index.docker.io/v1/",
// "registry.example:5000", "http://host/") against a registry host.
func sameRegistry(key, host string) bool {
	k := strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	k, _, _ = strings.Cut(k, "/")
	if host == "docker.io" {
		return k == "docker.io" || k == "index.docker.io" || k == "registry-1.docker.io"
	}
	return k == host
}

// pullAuth finds the login for ref in the pod's imagePullSecrets (in order,
// the first match wins), or nil.
func pullAuth(ref string, secrets []*corev1.Secret) *images.Auth {
	host := registryHost(ref)
	for _, s := range secrets {
		var cfg dockerConfig
		switch s.Type {
		case corev1.SecretTypeDockerConfigJson:
			if json.Unmarshal(s.Data[corev1.DockerConfigJsonKey], &cfg) != nil {
				continue
			}
		case corev1.SecretTypeDockercfg:
			if json.Unmarshal(s.Data[corev1.DockerConfigKey], &cfg.Auths) != nil {
				continue
			}
		default:
			continue
		}
		for key, a := range cfg.Auths {
			if !sameRegistry(key, host) {
				continue
			}
			if a.Username == "" && a.Auth != "" {
				if b, err := base64.StdEncoding.DecodeString(a.Auth); err == nil {
					a.Username, a.Password, _ = strings.Cut(string(b), ":")
				}
			}
			return &images.Auth{Username: a.Username, Password: a.Password}
		}
	}
	return nil
}

// pullSecrets reads the pod's imagePullSecrets; missing ones are skipped,
// as kubelet does (with a warning event).
func (k *Kubelet) pullSecrets(ctx context.Context, pod *corev1.Pod) []*corev1.Secret {
	return readPullSecrets(ctx, k.cfg.Client, pod, func(name string) {
		k.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "FailedToRetrieveImagePullSecret",
			"Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", name)
	})
}

// readPullSecrets reads the pod's imagePullSecrets that exist; missing
// (if not nil) hears of each one that could not be read.
func readPullSecrets(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod, missing func(name string)) []*corev1.Secret {
	var out []*corev1.Secret
	for _, ref := range pod.Spec.ImagePullSecrets {
		s, err := client.CoreV1().Secrets(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			if missing != nil {
				missing(ref.Name)
			}
			continue
		}
		out = append(out, s)
	}
	return out
}
