package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"maps"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ExtensionAuthConfigMapName is the ConfigMap in kube-system extension API
// servers read to authenticate the API server's proxied requests.
const ExtensionAuthConfigMapName = "extension-apiserver-authentication"

// ExtensionAuth is the content of the extension-apiserver-authentication
// ConfigMap: the cluster CA and the front-proxy CA (PEM).
type ExtensionAuth struct {
	ClientCA      []byte
	RequestHeader []byte
}

// extensionAuthData renders e as kube-apiserver does (JSON arrays for the
// request-header settings).
func extensionAuthData(e *ExtensionAuth) map[string]string {
	arr := func(v ...string) string { b, _ := json.Marshal(v); return string(b) }
	return map[string]string{
		"client-ca-file":                     string(e.ClientCA),
		"requestheader-client-ca-file":       string(e.RequestHeader),
		"requestheader-allowed-names":        arr("front-proxy-client"),
		"requestheader-username-headers":     arr("X-Remote-User"),
		"requestheader-group-headers":        arr("X-Remote-Group"),
		"requestheader-extra-headers-prefix": arr("X-Remote-Extra-"),
	}
}

// ensureExtensionAuthConfigMap creates or repairs the ConfigMap; nothing
// when Config.ExtensionAuth is nil.
func (s *Server) ensureExtensionAuthConfigMap(ctx context.Context) error {
	if s.cfg.ExtensionAuth == nil {
		return nil
	}
	res := findResource(s.cfg.Resources, "", "configmaps")
	if res == nil {
		return errors.New("bootstrap: the configmaps resource is not served")
	}
	want := extensionAuthData(s.cfg.ExtensionAuth)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ExtensionAuthConfigMapName, Namespace: metav1.NamespaceSystem},
		Data:       want,
	}
	created, err := s.createIfAbsent(ctx, res, cm, nil)
	if err != nil || created {
		if created {
			s.log.Info("bootstrap: created ConfigMap", zap.String("name", ExtensionAuthConfigMapName))
		}
		return err
	}
	return s.updateIfChanged(ctx, res, metav1.NamespaceSystem, ExtensionAuthConfigMapName, func(o runtime.Object) bool {
		c := o.(*corev1.ConfigMap)
		if maps.Equal(c.Data, want) {
			return false
		}
		c.Data = want
		return true
	})
}
