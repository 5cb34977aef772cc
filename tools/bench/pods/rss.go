package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// mem is a process's resident memory from /proc/<pid>/status, in KiB.
// PSS (from smaps_rollup) charges each shared page to its sharers in equal
// parts: the server and the agent run the same binary, so their summed RSS
// counts its file pages twice, their summed PSS once.
type mem struct {
	RSS, Anon, File, Shmem int64
	PSS, PSSAnon, PSSFile  int64
	Split                  smapsSplit // Rss per kind of mapping (smaps.go)
}

func (m mem) add(o mem) mem {
	return mem{m.RSS + o.RSS, m.Anon + o.Anon, m.File + o.File, m.Shmem + o.Shmem,
		m.PSS + o.PSS, m.PSSAnon + o.PSSAnon, m.PSSFile + o.PSSFile, m.Split.add(o.Split)}
}

func (m mem) String() string {
	return fmt.Sprintf("RSS %.1f (anon %.1f, file %.1f); PSS %.1f (anon %.1f, file %.1f)",
		mib(m.RSS), mib(m.Anon), mib(m.File), mib(m.PSS), mib(m.PSSAnon), mib(m.PSSFile))
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

func readMem(pid int) (mem, error) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return mem{}, err
	}
	defer f.Close()
	var m mem
	fields := map[string]*int64{"VmRSS:": &m.RSS, "RssAnon:": &m.Anon, "RssFile:": &m.File, "RssShmem:": &m.Shmem}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		if p, ok := fields[k]; ok {
			*p, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	if m.RSS == 0 {
		return m, fmt.Errorf("no VmRSS for pid %d", pid)
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if err := readPSS(pid, &m); err != nil {
		return m, err
	}
	m.Split, err = readSmapsSplit(pid)
	return m, err
}

func readPSS(pid int, m *mem) error {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup"))
	if err != nil {
		return err
	}
	fields := map[string]*int64{"Pss:": &m.PSS, "Pss_Anon:": &m.PSSAnon, "Pss_File:": &m.PSSFile}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			if p, ok := fields[f[0]]; ok {
				*p, _ = strconv.ParseInt(f[1], 10, 64)
			}
		}
	}
	return nil
}

// childrenNamed returns the pids of parent's children whose comm is name.
func childrenNamed(parent int, name string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		open, closeIdx := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closeIdx < open {
			continue
		}
		f := strings.Fields(s[closeIdx+1:])
		if len(f) > 1 && s[open+1:closeIdx] == name && f[1] == strconv.Itoa(parent) {
			out = append(out, pid)
		}
	}
	return out
}

// cpuSeconds is the process's user+system CPU time.
func cpuSeconds(pid int) float64 {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (u + st) / 100
}
