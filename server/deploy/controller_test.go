package deploy

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

type harness struct {
	t       *testing.T
	dir     string
	cluster *MemoryCluster
	records *MemoryRecords
	c       *Controller
}

func newHarness(t *testing.T, disabled ...string) *harness {
	h := &harness{t: t, dir: t.TempDir(), cluster: NewMemoryCluster(), records: NewMemoryRecords()}
	d := Dir{Path: h.dir, Disabled: map[string]bool{}, Server: "s1"}
	for _, n := range disabled {
		d.Disabled[n] = true
	}
	h.c = New(d, h.cluster, h.records, h.cluster, zaptest.NewLogger(t))
	return h
}

func (h *harness) write(name, content string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, name), []byte(content), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) sync(file string) error {
	h.t.Helper()
	return h.c.sync(context.Background(), file)
}

// names returns the Kind/namespace/name of every object in the cluster.
func (h *harness) names() string {
	var out []string
	for _, r := range h.cluster.Refs() {
		out = append(out, r.Kind+"/"+r.Namespace+"/"+r.Name)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func cmDoc(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata: {k: v}\n"
}

func TestSyncAppliesAndPrunes(t *testing.T) {
	h := newHarness(t)
	h.write("app.yaml", cmDoc("a")+"---\n"+cmDoc("b")+"---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ns1}\n")
	if err := h.sync("app.yaml"); err != nil {
		t.Fatal(err)
	}
	if got := h.names(); got != "ConfigMap/kube-system/a ConfigMap/kube-system/b Namespace//ns1" {
		t.Fatalf("after apply: %s", got)
	}
	o := h.cluster.Objects[Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "kube-system", Name: "a"}]
	if o.GetAnnotations()[FileAnnotation] != "app.yaml" || o.GetLabels()[FileLabel] != "app" {
		t.Fatalf("marks: %v %v", o.GetAnnotations(), o.GetLabels())
	}
	h.write("app.yaml", cmDoc("a"))
	if err := h.sync("app.yaml"); err != nil {
		t.Fatal(err)
	}
	if got := h.names(); got != "ConfigMap/kube-system/a" {
		t.Fatalf("after removing b and ns1: %s", got)
	}
	if err := os.Remove(filepath.Join(h.dir, "app.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := h.sync("app.yaml"); err != nil {
		t.Fatal(err)
	}
	if got := h.names(); got != "" || len(h.records.Recs) != 0 {
		t.Fatalf("after deleting the file: objects %q records %v", got, h.records.Recs)
	}
}

func TestSyncLeavesOthersObjects(t *testing.T) {
	h := newHarness(t)
	h.write("a.yaml", cmDoc("shared"))
	if err := h.sync("a.yaml"); err != nil {
		t.Fatal(err)
	}
	h.write("b.yaml", cmDoc("shared")) // b takes the object over
	if err := h.sync("b.yaml"); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(h.dir, "a.yaml"))
	if err := h.sync("a.yaml"); err != nil {
		t.Fatal(err)
	}
	if got := h.names(); got != "ConfigMap/kube-system/shared" {
		t.Fatalf("pruning a.yaml deleted b.yaml's object: %q", got)
	}
}

func TestSyncSkipAndDisable(t *testing.T) {
	h := newHarness(t, "off")
	h.write("app.yaml", cmDoc("a"))
	if err := h.sync("app.yaml"); err != nil {
		t.Fatal(err)
	}
	h.write("app.yaml.skip", "")
	h.write("app.yaml", cmDoc("b"))
	if err := h.sync("app.yaml"); err != nil {
		t.Fatal(err)
	}
	if got := h.names(); got != "ConfigMap/kube-system/a" {
		t.Fatalf("a skipped file changed the cluster: %q", got)
	}
	_ = os.Remove(filepath.Join(h.dir, "app.yaml"))
	if err := h.sync("app.yaml"); err != nil {
		t.Fatal(err)
	}
	if got := h.names(); got != "ConfigMap/kube-system/a" {
		t.Fatalf("deleting a skipped file pruned: %q", got)
	}
	h.write("off.yml", cmDoc("c"))
	if err := h.sync("off.yml"); err != nil {
		t.Fatal(err)
	}
	if got := h.names(); got != "ConfigMap/kube-system/a" {
		t.Fatalf("--disable off applied off.yml: %q", got)
	}
}

func TestSyncInvalidDocumentPrunesNothing(t *testing.T) {
	h := newHarness(t)
	h.write("app.yaml", cmDoc("a")+"---\n"+cmDoc("b"))
	if err := h.sync("app.yaml"); err != nil {
		t.Fatal(err)
	}
	h.write("app.yaml", cmDoc("a")+"---\nkind: [broken\n")
	if err := h.sync("app.yaml"); err != nil {
		t.Fatalf("an invalid document is reported, not retried: %v", err)
	}
	if got := h.names(); got != "ConfigMap/kube-system/a ConfigMap/kube-system/b" {
		t.Fatalf("a half-read file pruned: %q", got)
	}
	if len(h.cluster.Warnings) != 1 || !strings.Contains(h.cluster.Warnings[0], "InvalidManifest: manifest app.yaml: document 1") {
		t.Fatalf("warnings %v", h.cluster.Warnings)
	}
	if err := h.sync("app.yaml"); err != nil || len(h.cluster.Warnings) != 1 {
		t.Fatalf("the same problem warned twice: %v %v", err, h.cluster.Warnings)
	}
}

func TestSyncUnknownKindRetried(t *testing.T) {
	h := newHarness(t)
	h.cluster.Unknown["Widget"] = true
	h.write("crd.yaml", cmDoc("a")+"---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
	if err := h.sync("crd.yaml"); err == nil || !strings.Contains(err.Error(), "Widget") {
		t.Fatalf("want an error naming the unknown kind, got %v", err)
	}
	if got := h.names(); got != "ConfigMap/kube-system/a" {
		t.Fatalf("the known object was not applied: %q", got)
	}
	delete(h.cluster.Unknown, "Widget")
	if err := h.sync("crd.yaml"); err != nil {
		t.Fatal(err)
	}
	if got := h.names(); got != "ConfigMap/kube-system/a Widget/kube-system/w" {
		t.Fatalf("after the CRD exists: %q", got)
	}
}

// TestRunWatches drives Run with the real inotify watch: a file dropped in
// is applied, its deletion pruned, a resync finds files deleted while down.
func TestRunWatches(t *testing.T) {
	h := newHarness(t)
	h.records.Recs["gone.yaml"] = Record{Server: "s1"} // a file deleted while orch was down
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	h.write("w.yaml", cmDoc("watched"))
	waitFor(t, func() bool { return h.names() == "ConfigMap/kube-system/watched" }, "the dropped file applied")
	waitFor(t, func() bool { return recordCount(h) == 1 }, "the record of gone.yaml deleted")
	_ = os.Remove(filepath.Join(h.dir, "w.yaml"))
	waitFor(t, func() bool { return h.names() == "" }, "the deleted file pruned")
}

func recordCount(h *harness) int {
	files, _ := h.records.List(context.Background())
	return len(files)
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting: %s", what)
}

// TestSyncAnotherServersFile: in HA, a leader whose directory lacks a file
// another server applied leaves that file's objects alone.
func TestSyncAnotherServersFile(t *testing.T) {
	h := newHarness(t)
	h.write("app.yaml", cmDoc("a"))
	if err := h.sync("app.yaml"); err != nil {
		t.Fatal(err)
	}
	rec := h.records.Recs["app.yaml"]
	if rec.Server != "s1" {
		t.Fatalf("record server %q, want s1", rec.Server)
	}
	rec.Server = "s2"
	h.records.Recs["app.yaml"] = rec
	_ = os.Remove(filepath.Join(h.dir, "app.yaml"))
	if err := h.sync("app.yaml"); err != nil {
		t.Fatal(err)
	}
	if got := h.names(); got != "ConfigMap/kube-system/a" || len(h.records.Recs) != 1 {
		t.Fatalf("pruned another server's file: objects %q records %v", got, h.records.Recs)
	}
}
