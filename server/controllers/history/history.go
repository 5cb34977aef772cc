package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"reflect"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
)

// HashLabel is the label revisions and pods carry (apps/v1 ControllerRevisionHashLabelKey).
const HashLabel = appsv1.ControllerRevisionHashLabelKey

// ErrCollision means a revision with the computed name but other data
// exists: the caller bumps its status.collisionCount and retries.
var ErrCollision = errors.New("controller revision hash collision")

// Parent is the owner of revisions: a DaemonSet or a StatefulSet.
type Parent struct {
	Object         metav1.Object
	Kind           schema.GroupVersionKind
	Selector       labels.Selector
	Template       *corev1.PodTemplateSpec
	CollisionCount *int32
	// Annotations are copied onto new revisions (DaemonSets copy theirs,
	// so kubernetes.io/change-cause shows in `kubectl rollout history`).
	Annotations map[string]string
}

// Store reads revisions from the shared cache and writes them through the
// API. With a nil Lister (resource not served) it keeps nothing.
type Store struct {
	Client kubernetes.Interface
	Lister appslisters.ControllerRevisionLister
}

// Patch is the revision data for a template: a strategic-merge patch that
// replaces spec.template (upstream's getPatch).
func Patch(tpl *corev1.PodTemplateSpec) ([]byte, error) {
	raw, err := json.Marshal(tpl)
	if err != nil {
		return nil, fmt.Errorf("encoding pod template: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decoding pod template: %w", err)
	}
	m["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": m}})
}

// Hash is the FNV-32 hash of data (and the collision count), safely encoded.
func Hash(data []byte, collisionCount *int32) string {
	hf := fnv.New32()
	hf.Write(data)
	if collisionCount != nil {
		hf.Write([]byte(strconv.FormatInt(int64(*collisionCount), 10)))
	}
	return rand.SafeEncodeString(fmt.Sprint(hf.Sum32()))
}

// SameData reports whether two revision data are the same JSON document.
func SameData(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// Owned lists the parent's revisions, oldest revision number first.
func (s *Store) Owned(p Parent) ([]*appsv1.ControllerRevision, error) {
	if s.Lister == nil {
		return nil, nil
	}
	all, err := s.Lister.ControllerRevisions(p.Object.GetNamespace()).List(p.Selector)
	if err != nil {
		return nil, fmt.Errorf("listing controller revisions: %w", err)
	}
	var out []*appsv1.ControllerRevision
	for _, cr := range all {
		if ref := metav1.GetControllerOf(cr); ref != nil && ref.UID == p.Object.GetUID() {
			out = append(out, cr)
		}
	}
	SortByRevision(out)
	return out, nil
}

// SortByRevision sorts by revision number, then name.
func SortByRevision(crs []*appsv1.ControllerRevision) {
	sort.SliceStable(crs, func(i, j int) bool {
		if crs[i].Revision != crs[j].Revision {
			return crs[i].Revision < crs[j].Revision
		}
		return crs[i].Name < crs[j].Name
	})
}

// MaxRevision is the highest revision number in crs (0 when empty).
func MaxRevision(crs []*appsv1.ControllerRevision) int64 {
	var m int64
	for _, cr := range crs {
		m = max(m, cr.Revision)
	}
	return m
}
