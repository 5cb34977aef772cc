package cgroups

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/orch/orch/agent/qos"
)

// OOMKillCount returns how many tasks the kernel OOM-killed in the cgroup
// (absolute path, e.g. a ContainerCgroupsPath or a pod cgroup): oom_kill of
// memory.oom_control on v1 (the victim's own cgroup), of memory.events on v2
// (this cgroup and below). ErrNotFound when the cgroup is gone.
func (m *Manager) OOMKillCount(cgroupPath string) (uint64, error) {
	return m.be.oomKills(cgroupPath)
}

// OOMKilled reports whether a task in the cgroup was OOM-killed; call it when
// a container exits with 137 (SIGKILL), before its cgroup is deleted.
func (m *Manager) OOMKilled(cgroupPath string) bool {
	n, err := m.OOMKillCount(cgroupPath)
	if err != nil {
		m.log.Debug("read oom kills", zap.String("cgroup", cgroupPath), zap.Error(err))
		return false
	}
	return n > 0
}

// OwnOOMScoreAdj reads the agent's own /proc/self/oom_score_adj.
func OwnOOMScoreAdj() (int, error) {
	return readOOMScoreAdj("self")
}

func readOOMScoreAdj(pid string) (int, error) {
	data, err := os.ReadFile("/proc/" + pid + "/oom_score_adj")
	if err != nil {
		return 0, fmt.Errorf("read oom_score_adj: %w", err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("parse oom_score_adj: %w", err)
	}
	return v, nil
}

// OOMScoreAdj returns the oom_score_adj to give a container that package qos
// wants at want: never below the agent's own score, since without
// CAP_SYS_RESOURCE the runtime could not set it (containerd's
// restrict_oom_score_adj). A clamp is logged (info the first time, then
// debug).
func (m *Manager) OOMScoreAdj(want int) int {
	own, err := OwnOOMScoreAdj()
	if err != nil {
		m.log.Warn("cannot read own oom_score_adj; not clamping", zap.Error(err))
		return want
	}
	got := qos.ClampOOMScoreAdj(want, own)
	if got != want {
		m.mu.Lock()
		first := !m.clampLogged
		m.clampLogged = true
		m.mu.Unlock()
		log := m.log.Debug
		if first {
			log = m.log.Info
		}
		log("oom_score_adj clamped to the agent's own score (restrict_oom_score_adj)",
			zap.Int("wanted", want), zap.Int("own", own), zap.Int("using", got))
	}
	return got
}

// ApplyOOMScoreAdj writes OOMScoreAdj(want) to /proc/<pid>/oom_score_adj and
// returns the value written (for processes the agent starts itself; runc
// takes the value from the OCI spec's process.oomScoreAdj).
func (m *Manager) ApplyOOMScoreAdj(pid, want int) (int, error) {
	v := m.OOMScoreAdj(want)
	file := "/proc/" + strconv.Itoa(pid) + "/oom_score_adj"
	if err := os.WriteFile(file, []byte(strconv.Itoa(v)), 0); err != nil {
		return 0, fmt.Errorf("write %s=%d: %w", file, v, err)
	}
	return v, nil
}
