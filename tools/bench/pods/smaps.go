package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// smapsSplit is a process's resident memory per kind of mapping, in KiB, from
// /proc/<pid>/smaps: the executable's code (r-x), its read-only data (r--:
// .rodata, .gopclntab, type links), its writable data (rw-: .data and the
// copied-on-write part of it), every anonymous mapping (.bss, Go heap arenas,
// goroutine stacks, runtime metadata) and other files (bbolt's mmaps).
type smapsSplit struct {
	ExeText, ExeRO, ExeData, Anon, OtherFile int64
}

func (s smapsSplit) add(o smapsSplit) smapsSplit {
	return smapsSplit{s.ExeText + o.ExeText, s.ExeRO + o.ExeRO, s.ExeData + o.ExeData, s.Anon + o.Anon, s.OtherFile + o.OtherFile}
}

func (s smapsSplit) String() string {
	return fmt.Sprintf("text %.1f, rodata+pclntab %.1f, data %.1f, anon %.1f, other files %.1f",
		mib(s.ExeText), mib(s.ExeRO), mib(s.ExeData), mib(s.Anon), mib(s.OtherFile))
}

// readSmapsSplit reads /proc/<pid>/smaps and sums Rss per kind.
func readSmapsSplit(pid int) (smapsSplit, error) {
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	if err != nil {
		return smapsSplit{}, err
	}
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "smaps"))
	if err != nil {
		return smapsSplit{}, err
	}
	return splitSmaps(string(data), exe), nil
}

// splitSmaps is readSmapsSplit's pure part.
func splitSmaps(data, exe string) smapsSplit {
	var s smapsSplit
	var cur *int64
	for _, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			path := ""
			if len(f) >= 6 {
				path = strings.Join(f[5:], " ")
			}
			cur = s.kind(f[1], path, exe)
			continue
		}
		if len(f) >= 2 && f[0] == "Rss:" && cur != nil {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			*cur += v
		}
	}
	return s
}

func (s *smapsSplit) kind(perms, path, exe string) *int64 {
	switch {
	case path == exe && perms[2] == 'x':
		return &s.ExeText
	case path == exe && perms[1] == 'w':
		return &s.ExeData
	case path == exe:
		return &s.ExeRO
	case path == "" || strings.HasPrefix(path, "["):
		return &s.Anon
	default:
		return &s.OtherFile
	}
}
