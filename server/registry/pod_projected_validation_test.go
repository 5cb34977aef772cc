package registry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// TestValidateProjectedSources: upstream's rules for projected volume
// sources, the clusterTrustBundle and podCertificate ones in particular.
func TestValidateProjectedSources(t *testing.T) {
	pod := func(srcs ...corev1.VolumeProjection) func() runtime.Object {
		return func() runtime.Object {
			p := goodPod("web-1")
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
				Projected: &corev1.ProjectedVolumeSource{Sources: srcs}}}}
			return p
		}
	}
	ctb := func(c corev1.ClusterTrustBundleProjection) corev1.VolumeProjection {
		return corev1.VolumeProjection{ClusterTrustBundle: &c}
	}
	pc := func(mut func(*corev1.PodCertificateProjection)) corev1.VolumeProjection {
		c := corev1.PodCertificateProjection{SignerName: "ex.com/s", KeyType: "ECDSAP256", CredentialBundlePath: "creds.pem"}
		mut(&c)
		return corev1.VolumeProjection{PodCertificate: &c}
	}
	none := func(*corev1.PodCertificateProjection) {}
	const src = "spec.volumes[0].projected.sources[0]"
	sel := &metav1.LabelSelector{}
	runValidationCases(t, []validationCase{
		{"ctb by name", "", "pods", pod(ctb(corev1.ClusterTrustBundleProjection{Name: ptr.To("b"), Path: "b.pem"})), "", ""},
		{"ctb by signer", "", "pods", pod(ctb(corev1.ClusterTrustBundleProjection{SignerName: ptr.To("ex.com/s"), LabelSelector: sel, Path: "b.pem"})), "", ""},
		{"ctb signer-prefixed name", "", "pods", pod(ctb(corev1.ClusterTrustBundleProjection{Name: ptr.To("ex.com:s:1"), Path: "b.pem"})), "", ""},
		{"ctb both", "", "pods", pod(ctb(corev1.ClusterTrustBundleProjection{Name: ptr.To("b"), SignerName: ptr.To("ex.com/s"), Path: "b.pem"})),
			field.ErrorTypeInvalid, src + ".clusterTrustBundle"},
		{"ctb neither", "", "pods", pod(ctb(corev1.ClusterTrustBundleProjection{Path: "b.pem"})), field.ErrorTypeRequired, src + ".clusterTrustBundle"},
		{"ctb name and selector", "", "pods", pod(ctb(corev1.ClusterTrustBundleProjection{Name: ptr.To("b"), LabelSelector: sel, Path: "b.pem"})),
			field.ErrorTypeInvalid, src + ".clusterTrustBundle.labelSelector"},
		{"ctb bad name", "", "pods", pod(ctb(corev1.ClusterTrustBundleProjection{Name: ptr.To("B_1"), Path: "b.pem"})),
			field.ErrorTypeInvalid, src + ".clusterTrustBundle.name"},
		{"ctb bad signer", "", "pods", pod(ctb(corev1.ClusterTrustBundleProjection{SignerName: ptr.To("nodomain"), Path: "b.pem"})),
			field.ErrorTypeInvalid, src + ".clusterTrustBundle.signerName"},
		{"ctb no path", "", "pods", pod(ctb(corev1.ClusterTrustBundleProjection{Name: ptr.To("b")})), field.ErrorTypeRequired, src + ".clusterTrustBundle.path"},
		{"ctb dotdot path", "", "pods", pod(ctb(corev1.ClusterTrustBundleProjection{Name: ptr.To("b"), Path: "../b"})),
			field.ErrorTypeInvalid, src + ".clusterTrustBundle.path"},
		{"duplicate paths", "", "pods", pod(ctb(corev1.ClusterTrustBundleProjection{Name: ptr.To("a"), Path: "x"}),
			ctb(corev1.ClusterTrustBundleProjection{Name: ptr.To("b"), Path: "x"})), field.ErrorTypeInvalid, "spec.volumes[0].projected"},
		{"pod certificate", "", "pods", pod(pc(none)), "", ""},
		{"pod certificate 91 days", "", "pods", pod(pc(func(c *corev1.PodCertificateProjection) { c.MaxExpirationSeconds = ptr.To[int32](91 * 86400) })), "", ""},
		{"pod certificate too short", "", "pods", pod(pc(func(c *corev1.PodCertificateProjection) { c.MaxExpirationSeconds = ptr.To[int32](3599) })),
			field.ErrorTypeInvalid, src + ".podCertificate.maxExpirationSeconds"},
		{"pod certificate too long", "", "pods", pod(pc(func(c *corev1.PodCertificateProjection) { c.MaxExpirationSeconds = ptr.To[int32](91*86400 + 1) })),
			field.ErrorTypeInvalid, src + ".podCertificate.maxExpirationSeconds"},
		{"pod certificate kubernetes.io over a day", "", "pods", pod(pc(func(c *corev1.PodCertificateProjection) {
			c.SignerName, c.MaxExpirationSeconds = "kubernetes.io/x", ptr.To[int32](86401)
		})), field.ErrorTypeInvalid, src + ".podCertificate.maxExpirationSeconds"},
		{"pod certificate key type", "", "pods", pod(pc(func(c *corev1.PodCertificateProjection) { c.KeyType = "DSA" })),
			field.ErrorTypeNotSupported, src + ".podCertificate.keyType"},
		{"pod certificate no path", "", "pods", pod(pc(func(c *corev1.PodCertificateProjection) { c.CredentialBundlePath = "" })),
			field.ErrorTypeRequired, src + ".podCertificate"},
		{"pod certificate annotations", "", "pods", pod(pc(func(c *corev1.PodCertificateProjection) { c.UserAnnotations = map[string]string{"x": "y"} })),
			field.ErrorTypeInvalid, src + ".podCertificate.userAnnotations"},
		{"pod certificate path clash", "", "pods", pod(pc(func(c *corev1.PodCertificateProjection) { c.KeyPath = "creds.pem" })),
			field.ErrorTypeInvalid, "spec.volumes[0].projected"},
		{"two kinds in a source", "", "pods", pod(corev1.VolumeProjection{
			ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("b"), Path: "b.pem"},
			ConfigMap:          &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}),
			field.ErrorTypeForbidden, src},
		{"token too short", "", "pods", pod(corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Path: "t", ExpirationSeconds: ptr.To[int64](60)}}), field.ErrorTypeInvalid, src + ".serviceAccountToken.expirationSeconds"},
	})
}
