package kubectl

import (
	"strings"
	"testing"
)

// testNewAPIs: kubectl's tables and short names of the priority and
// fairness configuration, the Service IP space, the CSI storage classes
// and storage version migrations, and server-side apply of them.
func testNewAPIs(t *testing.T, k *kc) {
	suffix := strings.TrimPrefix(k.newNamespace(t), "kubectl-")
	contains(t, "get prioritylevelconfigurations", k.ok(t, "get", "prioritylevelconfigurations"),
		"NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE", "QUEUELENGTHLIMIT", "exempt", "catch-all", "global-default")
	contains(t, "get flowschemas", k.ok(t, "get", "flowschemas", "catch-all", "exempt"),
		"PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "MISSINGPL", "10000", "ByUser", "<none>")
	contains(t, "get servicecidr", k.ok(t, "get", "servicecidr", "kubernetes"), "CIDRS", "10.43.0.0/16")
	waitOutput(t, k, "services/default/kubernetes", "get", "ip", "10.43.0.1")
	vac := "kubectl-vac-" + suffix
	k.stdin(t, `apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata:
  name: `+vac+`
driverName: csi.example.com
parameters:
  iops: "3000"
`, "apply", "--server-side", "-f", "-")
	t.Cleanup(func() { _, _, _ = k.run(t, "delete", "vac", vac) })
	contains(t, "get vac", k.ok(t, "get", "vac", vac), "DRIVERNAME", "csi.example.com")
	svm := "kubectl-svm-" + suffix
	k.stdin(t, `apiVersion: storagemigration.k8s.io/v1
kind: StorageVersionMigration
metadata:
  name: `+svm+`
spec:
  resource:
    resource: configmaps
`, "apply", "-f", "-")
	t.Cleanup(func() { _, _, _ = k.run(t, "delete", "storageversionmigration", svm) })
	waitOutput(t, k, "Succeeded", "get", "storageversionmigration", svm)
	contains(t, "get storageversionmigration", k.ok(t, "get", "storageversionmigration", svm), "RESOURCE", "STATUS", "configmaps")
}
