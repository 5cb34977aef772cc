package runtime

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestNamespaceOpts(t *testing.T) {
	tests := []struct {
		name         string
		spec         ContainerSpec
		wantHostname string
		wantNS       []specs.LinuxNamespace
	}{
		{"host network shares host UTS", ContainerSpec{PodName: "p", Hostname: "ignored"}, "",
			[]specs.LinuxNamespace{{Type: specs.PIDNamespace}, {Type: specs.MountNamespace}}},
		{"pod netns, pod name", ContainerSpec{PodName: "p", NetnsPath: "/run/netns/x"}, "p",
			[]specs.LinuxNamespace{{Type: specs.PIDNamespace}, {Type: specs.MountNamespace},
				{Type: specs.UTSNamespace}, {Type: specs.NetworkNamespace, Path: "/run/netns/x"}}},
		{"pod netns, spec hostname", ContainerSpec{PodName: "p", Hostname: "h", NetnsPath: "/run/netns/x"}, "h",
			[]specs.LinuxNamespace{{Type: specs.PIDNamespace}, {Type: specs.MountNamespace},
				{Type: specs.UTSNamespace}, {Type: specs.NetworkNamespace, Path: "/run/netns/x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// containerd's default Linux spec has these namespaces.
			s := &oci.Spec{Hostname: "default", Linux: &specs.Linux{Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace}, {Type: specs.MountNamespace}, {Type: specs.UTSNamespace}, {Type: specs.NetworkNamespace}}}}
			for _, o := range namespaceOpts(tt.spec) {
				if err := o(context.Background(), nil, nil, s); err != nil {
					t.Fatal(err)
				}
			}
			if s.Hostname != tt.wantHostname {
				t.Errorf("hostname = %q, want %q", s.Hostname, tt.wantHostname)
			}
			if !slices.Equal(s.Linux.Namespaces, tt.wantNS) {
				t.Errorf("namespaces = %v, want %v", s.Linux.Namespaces, tt.wantNS)
			}
		})
	}
}

// TestHostNetworkSharesHostUTS runs a host-network container: it sees the
// host's hostname and the host's network and UTS namespaces.
func TestHostNetworkSharesHostUTS(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	p := newPod(t, false)
	s := p.spec("hostnet", "sh", "-c", "echo host=$(hostname); echo ns=$(readlink /proc/self/ns/uts) $(readlink /proc/self/ns/net)")
	s.Hostname = "not-used"
	run(t, r, s)
	st := waitState(t, r, s.ID, StateExited, 30*time.Second)
	log := waitLog(t, st.LogPath, "ns=", 5*time.Second)
	if st.ExitCode != 0 {
		t.Fatalf("exit %d:\n%s", st.ExitCode, log)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	uts, _ := os.Readlink("/proc/self/ns/uts")
	net, _ := os.Readlink("/proc/self/ns/net")
	for _, want := range []string{"host=" + host + "\n", "ns=" + uts + " " + net + "\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}
