package volumes

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/agent/envvars"
)

// certSources are MemSources with one trust bundle "ctb" (signer ex.com/s,
// selected by live=true) and pod certificates that are issued or not.
type certSources struct {
	*envvars.MemSources
	issued bool
	asked  []string // volume/index of each PodCertificate call
}

func (s *certSources) TrustAnchorsByName(_ context.Context, name string, allowMissing bool) ([]byte, error) {
	if name == "ctb" {
		return []byte("ANCHORS\n"), nil
	}
	if allowMissing {
		return []byte{}, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "clustertrustbundles"}, name)
}

func (s *certSources) TrustAnchorsBySigner(_ context.Context, signer string, sel *metav1.LabelSelector, allowMissing bool) ([]byte, error) {
	if signer == "ex.com/s" && sel != nil && sel.MatchLabels["live"] == "true" {
		return []byte("SIGNER ANCHORS\n"), nil
	}
	if allowMissing {
		return []byte{}, nil
	}
	return nil, errors.New("combination of signerName and labelSelector matched zero ClusterTrustBundles")
}

func (s *certSources) PodCertificate(_ context.Context, pod *corev1.Pod, volume string, index int, p *corev1.PodCertificateProjection) ([]byte, []byte, error) {
	s.asked = append(s.asked, volume+"/"+string(rune('0'+index)))
	if !s.issued {
		return nil, nil, ErrCertificatePending
	}
	return []byte("KEY\n"), []byte("CHAIN\n"), nil
}

func projectedVol(name string, srcs ...corev1.VolumeProjection) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: srcs, DefaultMode: ptr.To[int32](0o644)}}}
}

// TestCertProjections: clusterTrustBundle sources by name and by signer
// (optional ones empty when nothing matches, required ones an error),
// podCertificate sources as credential bundle, key and chain files
// (mode 0600 with an fsGroup), and a pending certificate is an error the
// pod's sync retries.
func TestCertProjections(t *testing.T) {
	m := New(zaptest.NewLogger(t), Config{PodsDir: filepath.Join(t.TempDir(), "pods")})
	src := &certSources{MemSources: envvars.NewMemSources()}
	live := &metav1.LabelSelector{MatchLabels: map[string]string{"live": "true"}}
	vol := projectedVol("tls",
		corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("ctb"), Path: "by-name.pem"}},
		corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{SignerName: ptr.To("ex.com/s"), LabelSelector: live, Path: "by-signer.pem"}},
		corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("gone"), Optional: ptr.To(true), Path: "optional.pem"}},
		corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{SignerName: "ex.com/s", KeyType: "ED25519",
			CredentialBundlePath: "creds.pem", KeyPath: "key.pem", CertificateChainPath: "chain.pem"}})
	pod := testPod("uid-certs", vol)
	ctx := context.Background()
	if _, err := m.payload(ctx, pod, &pod.Spec.Volumes[0], src); !errors.Is(err, ErrCertificatePending) {
		t.Fatalf("pending certificate: %v", err)
	}
	src.issued = true
	payload, err := m.payload(ctx, pod, &pod.Spec.Volumes[0], src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"by-name.pem": "ANCHORS\n", "by-signer.pem": "SIGNER ANCHORS\n", "optional.pem": "",
		"creds.pem": "KEY\nCHAIN\n", "key.pem": "KEY\n", "chain.pem": "CHAIN\n"}
	if len(payload) != len(want) {
		t.Fatalf("payload files %v", payload)
	}
	for p, data := range want {
		if fp := payload[p]; string(fp.Data) != data || fp.Mode != 0o644 {
			t.Errorf("%s: %q mode %o, want %q 0644", p, fp.Data, fp.Mode, data)
		}
	}
	if strings.Join(src.asked, ",") != "tls/3,tls/3" {
		t.Errorf("podCertificate asked for %v, want source 3 of tls", src.asked)
	}

	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To[int64](2000)}
	payload, err = m.payload(ctx, pod, &pod.Spec.Volumes[0], src)
	if err != nil {
		t.Fatal(err)
	}
	if fp := payload["creds.pem"]; fp.Mode != 0o600 || fp.FsGroup == nil || *fp.FsGroup != 2000 {
		t.Errorf("with fsGroup: mode %o group %v", fp.Mode, fp.FsGroup)
	}

	for _, c := range []struct {
		proj corev1.ClusterTrustBundleProjection
		msg  string
	}{
		{corev1.ClusterTrustBundleProjection{Name: ptr.To("gone"), Optional: ptr.To(false), Path: "x"}, "not found"},
		{corev1.ClusterTrustBundleProjection{SignerName: ptr.To("ex.com/s"), Path: "x"}, "matched zero ClusterTrustBundles"},
	} {
		bad := testPod("uid-bad", projectedVol("v", corev1.VolumeProjection{ClusterTrustBundle: &c.proj}))
		if _, err := m.payload(ctx, bad, &bad.Spec.Volumes[0], src); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("required bundle: err %v, want %q", err, c.msg)
		}
	}
	plain := testPod("uid-plain", projectedVol("v", corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("ctb"), Path: "x"}}))
	if _, err := m.payload(ctx, plain, &plain.Spec.Volumes[0], envvars.NewMemSources()); !errors.Is(err, ErrUnsupported) {
		t.Errorf("without a trust bundle source: %v", err)
	}
}
