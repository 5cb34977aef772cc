package deploy

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FieldManager is the server-side apply manager of everything applied from
// the manifests directory.
const FieldManager = "orch-deploy"

// Annotation and label orch puts on every object it applies from a file.
const (
	FileAnnotation = "orch.io/manifest-file" // the file name; pruning checks it
	FileLabel      = "orch.io/manifest"      // the base name as a label value, for selectors
)

// Applier changes the cluster: implemented over a dynamic client (client.go)
// and in memory (memory.go).
type Applier interface {
	// Apply server-side applies obj and returns where it landed (with
	// the namespace defaulted for namespaced kinds).
	Apply(ctx context.Context, obj *unstructured.Unstructured) (Ref, error)
	// Delete deletes the object if it still carries FileAnnotation=file;
	// an object that is gone, or whose kind is gone, is not an error.
	Delete(ctx context.Context, ref Ref, file string) error
}

// Record is what a manifest file applied last, and from which server.
type Record struct {
	Server string `json:"server,omitempty"`
	Refs   []Ref  `json:"objects"`
}

// Records stores what each manifest file applied last.
type Records interface {
	Get(ctx context.Context, file string) (rec Record, found bool, err error)
	Put(ctx context.Context, file string, rec Record) error
	Delete(ctx context.Context, file string) error
	List(ctx context.Context) ([]string, error)
}

// Warner reports a problem with a file to users (a Kubernetes Event).
type Warner interface {
	Warn(ctx context.Context, file, reason, message string)
}

// Controller applies and prunes the manifests of one directory.
type Controller struct {
	dir     Dir
	apply   Applier
	records Records
	warn    Warner
	log     *zap.Logger
	// lastWarning per file: an Event is made only when the problem changes.
	lastWarning map[string]string
}

// New returns a controller of dir over the given seams.
func New(dir Dir, apply Applier, records Records, warn Warner, log *zap.Logger) *Controller {
	return &Controller{dir: dir, apply: apply, records: records, warn: warn, log: log, lastWarning: map[string]string{}}
}

// sync brings the cluster in line with one file. An error means "try
// again later" (apply failures such as a kind that does not exist yet);
// unreadable documents are reported, the rest of the file is still applied,
// and nothing is pruned until the file reads cleanly.
func (c *Controller) sync(ctx context.Context, file string) error {
	state, data, err := c.dir.State(file)
	if err != nil {
		return err
	}
	switch state {
	case fileDisabled:
		c.log.Debug("manifest disabled", zap.String("file", file))
		return nil
	case fileAbsent:
		return c.reconcile(ctx, file, nil, false, true)
	}
	objs, perr := Parse(file, data)
	if perr != nil {
		c.log.Error("manifest has invalid documents; applying the others, pruning nothing", zap.String("file", file), zap.Error(perr))
		c.warnOnce(ctx, file, "InvalidManifest", perr.Error())
	}
	return c.reconcile(ctx, file, objs, perr != nil, false)
}

// reconcile applies objs (none when the file is gone), then deletes what
// the file applied before and no longer holds, unless partial (some
// documents were unreadable) or some apply failed. The record of a file that
// is gone is deleted once everything it applied is.
func (c *Controller) reconcile(ctx context.Context, file string, objs []*unstructured.Unstructured, partial, gone bool) error {
	rec, found, err := c.records.Get(ctx, file)
	if err != nil || (gone && !found) {
		return err
	}
	if gone && rec.Server != "" && rec.Server != c.dir.Server {
		// HA: another server's directory holds this file; a leader that
		// lacks it must not delete what that server applied.
		c.log.Info("manifest absent here but applied from another server; not pruning",
			zap.String("file", file), zap.String("server", rec.Server))
		return nil
	}
	prev := rec.Refs
	applied, aerr := c.applyAll(ctx, file, objs)
	if aerr != nil {
		c.warnOnce(ctx, file, "ApplyFailed", aerr.Error())
	} else if !partial {
		c.clearWarning(file)
	}
	if partial || aerr != nil {
		return errors.Join(aerr, c.put(ctx, file, union(prev, applied)))
	}
	kept, err := c.prune(ctx, file, prev, applied)
	if gone && len(kept) == 0 {
		return errors.Join(err, c.records.Delete(ctx, file))
	}
	return errors.Join(err, c.put(ctx, file, union(applied, kept)))
}

func (c *Controller) put(ctx context.Context, file string, refs []Ref) error {
	return c.records.Put(ctx, file, Record{Server: c.dir.Server, Refs: refs})
}

// applyAll applies every object (Namespaces and CRDs first) and returns the
// Refs that were applied; failures are joined but do not stop the others.
func (c *Controller) applyAll(ctx context.Context, file string, objs []*unstructured.Unstructured) ([]Ref, error) {
	sort.SliceStable(objs, func(i, j int) bool { return applyOrder(objs[i]) < applyOrder(objs[j]) })
	var applied []Ref
	var errs []error
	for _, o := range objs {
		mark(o, file)
		ref, err := c.apply.Apply(ctx, o)
		if err != nil {
			errs = append(errs, fmt.Errorf("applying %s from %s: %w", refOf(o), file, err))
			continue
		}
		applied = append(applied, ref)
	}
	if len(objs) > 0 && len(errs) == 0 {
		c.log.Info("applied manifest", zap.String("file", file), zap.Int("objects", len(applied)))
	}
	return applied, errors.Join(errs...)
}

// prune deletes the objects in prev that are not in applied and returns
// those it could not delete (kept in the record for the next try).
func (c *Controller) prune(ctx context.Context, file string, prev, applied []Ref) ([]Ref, error) {
	want := map[Ref]bool{}
	for _, r := range applied {
		want[r] = true
	}
	var kept []Ref
	var errs []error
	for _, r := range prev {
		if want[r] {
			continue
		}
		if err := c.apply.Delete(ctx, r, file); err != nil {
			kept = append(kept, r)
			errs = append(errs, fmt.Errorf("pruning %s of %s: %w", r, file, err))
			continue
		}
		c.log.Info("pruned object no longer in manifest", zap.String("file", file), zap.Stringer("object", r))
	}
	return kept, errors.Join(errs...)
}

func (c *Controller) warnOnce(ctx context.Context, file, reason, msg string) {
	if c.lastWarning[file] == reason+msg {
		return
	}
	c.lastWarning[file] = reason + msg
	c.warn.Warn(ctx, file, reason, msg)
}

func (c *Controller) clearWarning(file string) { delete(c.lastWarning, file) }

// applyOrder puts the kinds others depend on first.
func applyOrder(u *unstructured.Unstructured) int {
	switch u.GetKind() {
	case "Namespace", "CustomResourceDefinition":
		return 0
	case "ServiceAccount", "ClusterRole", "Role", "ConfigMap", "Secret", "PriorityClass", "StorageClass":
		return 1
	}
	return 2
}

// mark sets orch's annotation and label on an object from file.
func mark(u *unstructured.Unstructured, file string) {
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[FileAnnotation] = file
	u.SetAnnotations(ann)
	if v := labelValue(BaseName(file)); v != "" {
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[FileLabel] = v
		u.SetLabels(labels)
	}
}

// labelValue makes s a valid label value: [A-Za-z0-9._-], at most 63
// characters, alphanumeric at both ends ("" if nothing is left).
func labelValue(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '_' || ch == '-') {
			b[i] = '-'
		}
	}
	v := string(b)
	if len(v) > 63 {
		v = v[:63]
	}
	return strings.Trim(v, "._-")
}

// union returns a and the elements of b not in a.
func union(a, b []Ref) []Ref {
	seen := map[Ref]bool{}
	var out []Ref
	for _, list := range [][]Ref{a, b} {
		for _, r := range list {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}
