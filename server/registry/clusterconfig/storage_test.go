package clusterconfig

import (
	"context"
	"slices"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orch/orch/server/registry"
)

func resourceNamed(t *testing.T, name string) *registry.Resource {
	t.Helper()
	for _, r := range resources(registry.Config{}) {
		if r.Resource == name {
			return r
		}
	}
	t.Fatalf("no resource %s", name)
	return nil
}

func errorPaths(t *testing.T, res *registry.Resource, obj, old runtime.Object) []string {
	t.Helper()
	errs := res.Strategy.Validate(context.Background(), obj)
	if old != nil {
		errs = res.Strategy.ValidateUpdate(context.Background(), obj, old)
	}
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

func vac(driver string, params map[string]string) *storagev1.VolumeAttributesClass {
	return &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "gold", ResourceVersion: "1"}, DriverName: driver, Parameters: params}
}

func TestVolumeAttributesClass(t *testing.T) {
	res := resourceNamed(t, "volumeattributesclasses")
	foo := map[string]string{"foo": "bar"}
	for _, c := range []struct {
		name     string
		obj, old *storagev1.VolumeAttributesClass
		want     []string
	}{
		{"valid", vac("e2e-fake-csi-driver", foo), nil, nil},
		{"no driver", vac("", foo), nil, []string{"driverName"}},
		{"bad driver", vac("a b", foo), nil, []string{"driverName"}},
		{"no parameters", vac("d.example.com", nil), nil, []string{"parameters"}},
		{"labels change", vac("d", foo), vac("d", foo), nil},
		{"driver change", vac("e", foo), vac("d", foo), []string{"driverName"}},
		{"parameters change", vac("d", map[string]string{"foo": "baz"}), vac("d", foo), []string{"parameters"}},
	} {
		var old runtime.Object
		if c.old != nil {
			old = c.old
		}
		if got := errorPaths(t, res, c.obj, old); !slices.Equal(got, c.want) {
			t.Errorf("%s: errors at %v, want %v", c.name, got, c.want)
		}
	}
	if row := res.Strategy.TableRow(vac("d", foo)); row[1] != "d" {
		t.Errorf("row = %v", row)
	}
}

func capacity(class string, q string, topo map[string]string) *storagev1.CSIStorageCapacity {
	c := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", ResourceVersion: "1"}, StorageClassName: class}
	if q != "" {
		c.Capacity = ptrQ(resource.MustParse(q))
	}
	if topo != nil {
		c.NodeTopology = &metav1.LabelSelector{MatchLabels: topo}
	}
	return c
}

func ptrQ(q resource.Quantity) *resource.Quantity { return &q }

func TestCSIStorageCapacity(t *testing.T) {
	res := resourceNamed(t, "csistoragecapacities")
	zone := map[string]string{"zone": "a"}
	for _, c := range []struct {
		name     string
		obj, old *storagev1.CSIStorageCapacity
		want     []string
	}{
		{"valid", capacity("fast", "1Gi", zone), nil, nil},
		{"bad class", capacity("Fast!", "1Gi", nil), nil, []string{"storageClassName"}},
		{"negative", capacity("fast", "-1", nil), nil, []string{"capacity"}},
		{"bad topology", capacity("fast", "", map[string]string{"a b": "c"}), nil, []string{"nodeTopology.matchLabels"}},
		{"capacity update", capacity("fast", "2Gi", zone), capacity("fast", "1Gi", zone), nil},
		{"class update", capacity("slow", "1Gi", zone), capacity("fast", "1Gi", zone), []string{"storageClassName"}},
		{"topology update", capacity("fast", "1Gi", map[string]string{"zone": "b"}), capacity("fast", "1Gi", zone), []string{"nodeTopology"}},
	} {
		var old runtime.Object
		if c.old != nil {
			old = c.old
		}
		if got := errorPaths(t, res, c.obj, old); !slices.Equal(got, c.want) {
			t.Errorf("%s: errors at %v, want %v", c.name, got, c.want)
		}
	}
	if row := res.Strategy.TableRow(capacity("fast", "", nil)); row[1] != "fast" || row[2] != "<unset>" {
		t.Errorf("row = %v", row)
	}
}
