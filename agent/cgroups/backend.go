package cgroups

// backend is one cgroup version's filesystem layout. group is an absolute
// cgroup path such as /orch/kubepods/burstable/pod<uid>.
type backend interface {
	// version is 1 or 2.
	version() int
	// ensure creates group (and its parents) if needed and applies r.
	ensure(group string, r Resources) error
	// exists reports whether group exists (in the memory hierarchy on v1).
	exists(group string) bool
	// remove removes group and everything below it leaf-first in every
	// hierarchy; a missing group is success; a group with tasks gives ErrBusy.
	remove(group string) error
	// children lists the names of group's child cgroups (union over
	// hierarchies); a missing group gives none.
	children(group string) ([]string, error)
	// addProc moves pid into group.
	addProc(group string, pid int) error
	// procs lists the pids directly in group.
	procs(group string) ([]int, error)
	// oomKills returns how many tasks the kernel OOM-killed in group.
	oomKills(group string) (uint64, error)
	// dir returns the directory of group in the named controller's
	// hierarchy (v2: the unified directory).
	dir(controller, group string) string
}
