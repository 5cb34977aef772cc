package cgroups

// ContainerUnified returns the cgroup v2 settings kubelet passes to the
// runtime for every container (the OCI spec's linux.resources.unified): on
// v2 memory.oom.group=1, so an OOM kill takes the whole container down
// rather than one process of it (kubelet's default, singleProcessOOMKill
// false). On v1 it returns nil: the knob does not exist there.
func (m *Manager) ContainerUnified() map[string]string {
	if m.be.version() != 2 {
		return nil
	}
	return map[string]string{"memory.oom.group": "1"}
}
