package serviceip

import (
	"context"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orch/orch/server/registry"
)

func resource(t *testing.T, name string) *registry.Resource {
	t.Helper()
	for _, r := range resources(registry.Config{}) {
		if r.Resource == name {
			return r
		}
	}
	t.Fatalf("no resource %s", name)
	return nil
}

func fields(t *testing.T, res *registry.Resource, obj, old runtime.Object) []string {
	t.Helper()
	ctx := context.Background()
	errs := res.Strategy.Validate(ctx, obj)
	if old != nil {
		errs = res.Strategy.ValidateUpdate(ctx, obj, old)
	}
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

func cidr(cidrs ...string) *networkingv1.ServiceCIDR {
	return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "1"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
}

func TestServiceCIDRValidation(t *testing.T) {
	res := resource(t, "servicecidrs")
	for _, c := range []struct {
		name     string
		obj, old *networkingv1.ServiceCIDR
		want     []string
	}{
		{"single", cidr("10.43.0.0/16"), nil, nil},
		{"dual", cidr("10.43.0.0/16", "fd00::/108"), nil, nil},
		{"none", cidr(), nil, []string{"spec.cidrs"}},
		{"three", cidr("10.0.0.0/8", "fd00::/108", "10.1.0.0/16"), nil, []string{"spec.cidrs"}},
		{"same family twice", cidr("10.0.0.0/16", "10.1.0.0/16"), nil, []string{"spec.cidrs"}},
		{"not a cidr", cidr("10.0.0.1"), nil, []string{"spec.cidrs[0]"}},
		{"host bits set", cidr("10.0.0.1/16"), nil, []string{"spec.cidrs[0]"}},
		{"changed", cidr("10.44.0.0/16"), cidr("10.43.0.0/16"), []string{"spec.cidrs[0]"}},
		{"second family added", cidr("10.43.0.0/16", "fd00::/108"), cidr("10.43.0.0/16"), nil},
		{"family removed", cidr("10.43.0.0/16"), cidr("10.43.0.0/16", "fd00::/108"), []string{"spec.cidrs"}},
	} {
		var old runtime.Object
		if c.old != nil {
			old = c.old
		}
		if got := fields(t, res, c.obj, old); !slices.Equal(got, c.want) {
			t.Errorf("%s: errors at %v, want %v", c.name, got, c.want)
		}
	}
}

func ip(name string, ref *networkingv1.ParentReference) *networkingv1.IPAddress {
	return &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Spec: networkingv1.IPAddressSpec{ParentRef: ref}}
}

func TestIPAddressValidation(t *testing.T) {
	res := resource(t, "ipaddresses")
	svc := &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "web"}
	for _, c := range []struct {
		name     string
		obj, old *networkingv1.IPAddress
		want     []string
	}{
		{"v4", ip("10.43.0.12", svc), nil, nil},
		{"broadcast", ip("255.255.255.255", svc), nil, nil},
		{"v6", ip("fe80::42:1dff:fe84:f9e2", svc), nil, nil},
		{"not canonical", ip("fe80:0::1", svc), nil, []string{"metadata.name"}},
		{"leading zero", ip("10.043.0.1", svc), nil, []string{"metadata.name"}},
		{"no parent", ip("10.43.0.12", nil), nil, []string{"spec.parentRef"}},
		{"parent without name", ip("10.43.0.12", &networkingv1.ParentReference{Resource: "services"}), nil, []string{"spec.parentRef.name"}},
		{"parent bad group", ip("10.43.0.12", &networkingv1.ParentReference{Group: "Bad_Group", Resource: "x", Name: "y"}), nil,
			[]string{"spec.parentRef.group"}},
		{"parent changed", ip("10.43.0.12", &networkingv1.ParentReference{Resource: "services", Name: "other"}), ip("10.43.0.12", svc),
			[]string{"spec.parentRef"}},
	} {
		var old runtime.Object
		if c.old != nil {
			old = c.old
		}
		if got := fields(t, res, c.obj, old); !slices.Equal(got, c.want) {
			t.Errorf("%s: errors at %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRows(t *testing.T) {
	row := resource(t, "ipaddresses").Strategy.TableRow(ip("10.43.0.12",
		&networkingv1.ParentReference{Group: "", Resource: "services", Namespace: "default", Name: "web"}))
	if row[1] != "services/default/web" {
		t.Errorf("IPAddress row = %v", row)
	}
	row = resource(t, "servicecidrs").Strategy.TableRow(cidr("10.43.0.0/16", "fd00::/108"))
	if row[1] != "10.43.0.0/16,fd00::/108" {
		t.Errorf("ServiceCIDR row = %v", row)
	}
}
