package logging

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
)

func TestOpenFileJSONAppends(t *testing.T) {
	p := filepath.Join(t.TempDir(), "orch.log")
	if err := os.WriteFile(p, []byte("earlier line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log, closeLog, err := Open(Options{File: p, Format: FormatJSON})
	if err != nil {
		t.Fatal(err)
	}
	log.Named("comp").Info("hello", zap.String("k", "v"))
	log.Debug("hidden without --debug")
	closeLog()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || lines[0] != "earlier line" {
		t.Fatalf("want the old line kept and one new line, got %q", lines)
	}
	var entry map[string]interface{}
	if err := json.Unmarshal([]byte(lines[1]), &entry); err != nil {
		t.Fatalf("not JSON: %q: %v", lines[1], err)
	}
	if entry["msg"] != "hello" || entry["logger"] != "comp" || entry["k"] != "v" || entry["level"] != "info" {
		t.Fatalf("entry %v", entry)
	}
}

func TestOpenFileModeAndText(t *testing.T) {
	p := filepath.Join(t.TempDir(), "orch.log")
	log, closeLog, err := Open(Options{File: p, Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("debug line")
	closeLog()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("log file mode %o, want 600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), "DEBUG") || !strings.Contains(string(data), "debug line") || strings.HasPrefix(string(data), "{") {
		t.Errorf("text format line %q", data)
	}
}

func TestOpenAlsoToStderr(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "orch.log")
	// Capture stderr in a file for the duration of the test.
	errFile, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = errFile
	log, closeLog, err := Open(Options{File: p, AlsoToStderr: true})
	os.Stderr = saved
	if err != nil {
		t.Fatal(err)
	}
	log.Info("both places")
	closeLog()
	_ = errFile.Close()
	for _, f := range []string{p, errFile.Name()} {
		data, _ := os.ReadFile(f)
		if !strings.Contains(string(data), "both places") {
			t.Errorf("%s: %q lacks the line", f, data)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	if _, _, err := Open(Options{Format: "xml"}); err == nil || !strings.Contains(err.Error(), `--log-format "xml"`) {
		t.Errorf("bad format: %v", err)
	}
	if _, _, err := Open(Options{File: filepath.Join(t.TempDir(), "no", "such", "dir", "x.log")}); err == nil || !strings.Contains(err.Error(), "--log") {
		t.Errorf("unwritable file: %v", err)
	}
}
