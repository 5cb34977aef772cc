package pki

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"sigs.k8s.io/yaml"
)

// KubeconfigName names the cluster, user and context of written kubeconfig
// files, as k3s does.
const KubeconfigName = "default"

// DefaultKubeconfigMode is the mode used when WriteKubeconfig gets 0.
const DefaultKubeconfigMode os.FileMode = 0o600

// WriteKubeconfig atomically writes a kubeconfig for server (an https URL)
// with embedded CA, client certificate and key. The parent directory is
// created with mode 0700 when missing; the file gets exactly mode (0600
// when mode is 0) whatever the umask is.
func WriteKubeconfig(path string, mode os.FileMode, server string, caPEM, certPEM, keyPEM []byte) error {
	if mode == 0 {
		mode = DefaultKubeconfigMode
	}
	data, err := kubeconfigYAML(server, caPEM, certPEM, keyPEM)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := ensurePrivateDir(dir); err != nil {
			return err
		}
	}
	if err := writeFileAtomic(path, data, mode); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

func kubeconfigYAML(server string, caPEM, certPEM, keyPEM []byte) ([]byte, error) {
	cfg := clientcmdv1.Config{
		Kind:       "Config",
		APIVersion: "v1",
		Clusters: []clientcmdv1.NamedCluster{{Name: KubeconfigName, Cluster: clientcmdv1.Cluster{
			Server: server, CertificateAuthorityData: caPEM,
		}}},
		AuthInfos: []clientcmdv1.NamedAuthInfo{{Name: KubeconfigName, AuthInfo: clientcmdv1.AuthInfo{
			ClientCertificateData: certPEM, ClientKeyData: keyPEM,
		}}},
		Contexts: []clientcmdv1.NamedContext{{Name: KubeconfigName, Context: clientcmdv1.Context{
			Cluster: KubeconfigName, AuthInfo: KubeconfigName,
		}}},
		CurrentContext: KubeconfigName,
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode kubeconfig: %w", err)
	}
	return b, nil
}
