package i18nlazy

import "testing"

func TestInvoked(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"orch"}, false},
		{[]string{"/usr/local/bin/orch", "server"}, false},
		{[]string{"/usr/local/bin/orch", "kubectl", "get", "ns"}, true},
		{[]string{"orch", "kubectl"}, true},
		{[]string{"/usr/local/bin/kubectl", "get", "ns"}, true},
		{[]string{"kubectl"}, true},
		{[]string{"/usr/bin/kubectl-orch", "get"}, false},
		{[]string{"orch", "server", "kubectl"}, false},
	} {
		if got := Invoked(tc.args); got != tc.want {
			t.Errorf("Invoked(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestSkippedInTestBinary: the test binary is not kubectl, so init replaced
// the translation loader.
func TestSkippedInTestBinary(t *testing.T) {
	if !Skipped() {
		t.Error("translations loader not replaced in a non-kubectl process")
	}
}
