package runtime

import "testing"

// TestDefaultAddress: the exported default socket is the one a managed
// containerd with the default layout listens on (`orch ctr` relies on it).
func TestDefaultAddress(t *testing.T) {
	m := &Managed{cfg: DefaultManagedConfig("/var/lib/orch")}
	if got := m.Address(); got != DefaultAddress {
		t.Fatalf("Address() = %q, DefaultAddress = %q", got, DefaultAddress)
	}
}
