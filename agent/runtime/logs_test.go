package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entries strips the timestamps of a CRI log, leaving "<stream> <tag> <msg>".
func entries(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		_, rest, _ := strings.Cut(l, " ")
		out = append(out, rest)
	}
	return out
}

func TestCRILogWriter(t *testing.T) {
	long := strings.Repeat("x", maxLineSize+10)
	cases := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"lines", []string{"a\nb\n"}, []string{"stdout F a", "stdout F b"}},
		{"split writes", []string{"he", "llo\nwor", "ld\n"}, []string{"stdout F hello", "stdout F world"}},
		{"unterminated last line", []string{"a\nrest"}, []string{"stdout F a", "stdout P rest"}},
		{"empty line", []string{"\n"}, []string{"stdout F "}},
		{"long line", []string{long + "\n"}, []string{"stdout P " + long[:maxLineSize], "stdout F xxxxxxxxxx"}},
		{"long without newline", []string{long}, []string{"stdout P " + long[:maxLineSize], "stdout P xxxxxxxxxx"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "0.log")
			lf, err := openLogFile(path, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			w := lf.stream("stdout")
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("write = %d, %v", n, err)
				}
			}
			w.Close()
			got := entries(t, path)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestCRILogRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	lf, err := openLogFile(path, 200, 3)
	if err != nil {
		t.Fatal(err)
	}
	out, errw := lf.stream("stdout"), lf.stream("stderr")
	for i := 0; i < 20; i++ {
		_, _ = out.Write([]byte("line-" + itoa(i) + "\n"))
		_, _ = errw.Write([]byte("err-" + itoa(i) + "\n"))
	}
	out.Close()
	errw.Close()
	for _, p := range []string{path, path + ".1", path + ".2"} {
		fi, err := os.Stat(p)
		if err != nil || fi.Size() > 200 {
			t.Errorf("%s: %v %v", p, fi, err)
		}
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Error("more files kept than maxFiles")
	}
	got := entries(t, path)
	if last := got[len(got)-1]; last != "stderr F err-19" {
		t.Errorf("last entry %q", last)
	}
}
