package overlay

import (
	"fmt"
	"net"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testNode(name, cidr, ip, mac string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}},
		Spec: corev1.NodeSpec{PodCIDR: cidr}}
	if ip != "" {
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name},
			{Type: corev1.NodeInternalIP, Address: ip}}
	}
	if mac != "" {
		n.Annotations[AnnotationVXLANMAC] = mac
	}
	return n
}

func mustCIDR(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

func TestPeersFromNodes(t *testing.T) {
	own := mustCIDR("10.42.0.0/24")
	deleting := testNode("d", "10.42.9.0/24", "10.0.0.9", "")
	deleting.DeletionTimestamp = &metav1.Time{}
	tests := []struct {
		name  string
		nodes []*corev1.Node
		want  []string // name podCIDR nodeIP mac
	}{
		{"self left out", []*corev1.Node{testNode("self", "10.42.0.0/24", "10.0.0.1", "")}, nil},
		{"sorted peers", []*corev1.Node{
			testNode("c", "10.42.2.0/24", "10.0.0.3", "02:00:00:00:00:03"),
			testNode("b", "10.42.1.0/24", "10.0.0.2", ""),
		}, []string{"b 10.42.1.0/24 10.0.0.2 ", "c 10.42.2.0/24 10.0.0.3 02:00:00:00:00:03"}},
		{"no podCIDR yet", []*corev1.Node{testNode("b", "", "10.0.0.2", "")}, nil},
		{"no InternalIP", []*corev1.Node{testNode("b", "10.42.1.0/24", "", "")}, nil},
		{"podCIDRs only", []*corev1.Node{func() *corev1.Node {
			n := testNode("b", "", "10.0.0.2", "")
			n.Spec.PodCIDRs = []string{"10.42.1.0/24"}
			return n
		}()}, []string{"b 10.42.1.0/24 10.0.0.2 "}},
		{"overlapping own podCIDR", []*corev1.Node{testNode("x", "10.42.0.0/16", "10.0.0.5", "")}, nil},
		{"same podCIDR as own", []*corev1.Node{testNode("x", "10.42.0.0/24", "10.0.0.5", "")}, nil},
		{"bad MAC ignored", []*corev1.Node{testNode("b", "10.42.1.0/24", "10.0.0.2", "nope")}, []string{"b 10.42.1.0/24 10.0.0.2 "}},
		{"IPv6 podCIDR skipped", []*corev1.Node{testNode("b", "fd00::/64", "10.0.0.2", "")}, nil},
		{"deleting node", []*corev1.Node{deleting}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range PeersFromNodes("self", own, tc.nodes) {
				got = append(got, fmt.Sprintf("%s %s %s %s", p.Name, p.PodNet, p.NodeIP, p.MAC))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("peers = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDesired(t *testing.T) {
	peers := PeersFromNodes("self", mustCIDR("10.42.0.0/24"), []*corev1.Node{
		testNode("b", "10.42.1.0/24", "10.0.0.2", "02:00:00:00:00:02"),
		testNode("c", "10.42.2.0/24", "10.0.0.3", ""), // no MAC published yet
	})
	tests := []struct {
		name string
		got  Desired
		want string
	}{
		{"vxlan", DesiredVXLAN(peers),
			"{[{10.42.1.0/24 10.42.1.0 true}] [{02:00:00:00:00:02 10.0.0.2}] [{10.42.1.0 02:00:00:00:00:02}]}"},
		{"host-gw", DesiredHostGW(peers),
			"{[{10.42.1.0/24 10.0.0.2 false} {10.42.2.0/24 10.0.0.3 false}] [] []}"},
		{"no peers", DesiredVXLAN(nil), "{[] [] []}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(tc.got); got != tc.want {
				t.Errorf("desired = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestParseBackend(t *testing.T) {
	for in, want := range map[string]string{"": BackendVXLAN, "vxlan": BackendVXLAN, "host-gw": BackendHostGW, "udp": ""} {
		got, err := ParseBackend(in)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("ParseBackend(%q) = %q, %v", in, got, err)
		}
	}
}

func TestAnnotationsMatch(t *testing.T) {
	mac, be := "02:00:00:00:00:01", "vxlan"
	tests := []struct {
		name string
		have map[string]string
		want map[string]*string
		ok   bool
	}{
		{"equal", map[string]string{AnnotationVXLANMAC: mac, AnnotationBackend: be}, map[string]*string{AnnotationVXLANMAC: &mac, AnnotationBackend: &be}, true},
		{"missing", nil, map[string]*string{AnnotationBackend: &be}, false},
		{"differs", map[string]string{AnnotationBackend: "host-gw"}, map[string]*string{AnnotationBackend: &be}, false},
		{"must be absent", map[string]string{AnnotationVXLANMAC: mac}, map[string]*string{AnnotationVXLANMAC: nil}, false},
		{"absent", map[string]string{}, map[string]*string{AnnotationVXLANMAC: nil}, true},
	}
	for _, tc := range tests {
		if got := annotationsMatch(tc.have, tc.want); got != tc.ok {
			t.Errorf("%s: annotationsMatch = %v", tc.name, got)
		}
	}
}
