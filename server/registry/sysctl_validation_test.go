package registry

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestValidateSysctls: names outside upstream's format are refused with
// its message; valid ones (dots or slashes) pass; duplicates are refused.
func TestValidateSysctls(t *testing.T) {
	errs := validateSysctls([]corev1.Sysctl{{Name: "foo-"}, {Name: "kernel.shmmax"}, {Name: "safe-and-unsafe"},
		{Name: "bar.."}, {Name: "net/ipv4/tcp_syncookies"}, {Name: "kernel.shmmax"}}, field.NewPath("sysctls"))
	msg := errs.ToAggregate().Error()
	for _, want := range []string{`Invalid value: "foo-"`, `Invalid value: "bar.."`, `sysctls[5].name: Duplicate value: "kernel.shmmax"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors lack %q: %s", want, msg)
		}
	}
	if len(errs) != 3 {
		t.Errorf("want 3 errors, got %d: %s", len(errs), msg)
	}
}
