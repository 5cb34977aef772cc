package i18nlazy

import (
	"os"
	"path/filepath"

	"k8s.io/kubectl/pkg/util/i18n"
)

// skipped records whether init replaced the loader, for tests.
var skipped bool

func init() {
	if Invoked(os.Args) {
		return
	}
	if err := i18n.SetLoadTranslationsFunc(func() error { return nil }); err == nil {
		skipped = true
	}
}

// Invoked reports whether args (os.Args) run kubectl: the binary called as
// `kubectl` (a symlink) or `orch kubectl …`.
func Invoked(args []string) bool {
	if len(args) == 0 {
		return false
	}
	return filepath.Base(args[0]) == "kubectl" || (len(args) > 1 && args[1] == "kubectl")
}

// Skipped reports whether this process does without kubectl's translations.
func Skipped() bool { return skipped }
