package volumes

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestValidatePath(t *testing.T) {
	cases := []struct {
		path string
		ok   bool
	}{
		{"a", true}, {"a/b/c", true}, {"a..b", true}, {".a", true},
		{"", false}, {"/abs", false}, {"..a", false}, {"../a", false}, {"a/../b", false}, {"a/..", false},
		{strings.Repeat("x", 256), false}, {strings.Repeat("x/", 2049), false},
	}
	for _, tc := range cases {
		if err := validatePath(tc.path); (err == nil) != tc.ok {
			t.Errorf("validatePath(%q) = %v, want ok=%v", tc.path, err, tc.ok)
		}
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	steps := []struct {
		name        string
		payload     map[string]FileProjection
		wantChanged bool
		wantTop     []string // user-visible names
	}{
		{"first", map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0o644}, "d/b": {Data: []byte("2"), Mode: 0o400}}, true, []string{"a", "d"}},
		{"same is no-op", map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0o644}, "d/b": {Data: []byte("2"), Mode: 0o400}}, false, []string{"a", "d"}},
		{"mode change", map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0o600}, "d/b": {Data: []byte("2"), Mode: 0o400}}, true, []string{"a", "d"}},
		{"key removed, added", map[string]FileProjection{"a": {Data: []byte("1b"), Mode: 0o600}, "c": {Data: nil, Mode: 0o644}}, true, []string{"a", "c"}},
		{"empty", map[string]FileProjection{}, true, nil},
	}
	for _, st := range steps {
		changed, err := writeAtomic(dir, st.payload)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if changed != st.wantChanged {
			t.Errorf("%s: changed = %v, want %v", st.name, changed, st.wantChanged)
		}
		checkAtomicDir(t, st.name, dir, st.payload, st.wantTop)
	}
	if _, err := writeAtomic(dir, map[string]FileProjection{"../x": {}}); err == nil {
		t.Fatal("want error for ../x")
	}
}

// checkAtomicDir verifies the layout: ..data -> the only ts dir, the
// user-visible names are symlinks into ..data, contents and modes match.
func checkAtomicDir(t *testing.T, name, dir string, payload map[string]FileProjection, wantTop []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ts, top []string
	for _, e := range entries {
		switch {
		case e.Name() == dataDirName:
		case strings.HasPrefix(e.Name(), "..20"):
			ts = append(ts, e.Name())
		default:
			top = append(top, e.Name())
			link, _ := os.Readlink(filepath.Join(dir, e.Name()))
			if link != filepath.Join(dataDirName, e.Name()) {
				t.Errorf("%s: %s -> %q, want through ..data", name, e.Name(), link)
			}
		}
	}
	if data, _ := os.Readlink(filepath.Join(dir, dataDirName)); len(ts) != 1 || data != ts[0] {
		t.Errorf("%s: ts dirs %v, ..data -> %q", name, ts, data)
	}
	if !reflect.DeepEqual(top, wantTop) {
		t.Errorf("%s: user-visible %v, want %v", name, top, wantTop)
	}
	for p, fp := range payload {
		full := filepath.Join(dir, p)
		if got := readFile(t, full); got != string(fp.Data) {
			t.Errorf("%s: %s = %q, want %q", name, p, got, fp.Data)
		}
		if got := fileModeOf(t, full); got != os.FileMode(fp.Mode) {
			t.Errorf("%s: %s mode %o, want %o", name, p, got, fp.Mode)
		}
	}
}
