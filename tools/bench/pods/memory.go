package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procMem is the resident memory of the processes under test.
type procMem struct {
	Server, Agent, Containerd, Shims mem
	ServerAgent                      mem // Server + Agent
	Node                             mem // ServerAgent + Containerd + Shims: sum PSS, not RSS
	ShimCount                        int
}

func (e *env) memory() procMem {
	var m procMem
	if e.server != nil {
		m.Server, _ = readMem(e.server.pid())
	}
	if e.agent != nil {
		m.Agent, _ = readMem(e.agent.pid())
	}
	if n := e.nodeProc(); n != nil {
		for _, pid := range childrenNamed(n.pid(), "containerd") {
			c, _ := readMem(pid)
			m.Containerd = m.Containerd.add(c)
		}
	}
	for _, pid := range e.shims() {
		s, _ := readMem(pid)
		m.Shims = m.Shims.add(s)
		m.ShimCount++
	}
	m.ServerAgent = m.Server.add(m.Agent)
	m.Node = m.ServerAgent.add(m.Containerd).add(m.Shims)
	return m
}

// shims lists the containerd-shim-runc-v2 processes of the node's
// containerd (their comm is cut to 15 bytes; their command line names the
// containerd socket).
func (e *env) shims() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, ent := range entries {
		if _, err := strconv.Atoi(ent.Name()); err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "comm"))
		if err != nil || !strings.HasPrefix(string(comm), "containerd-shim") {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmd), e.containerdSock()) {
			pid, _ := strconv.Atoi(ent.Name())
			out = append(out, pid)
		}
	}
	return out
}

// procCPU is CPU seconds used by the server and the agent, and by the
// node's containerd and its shims.
type procCPU struct{ Server, Agent, Containerd, Shims float64 }

func (c procCPU) sub(o procCPU) procCPU {
	return procCPU{c.Server - o.Server, c.Agent - o.Agent, c.Containerd - o.Containerd, c.Shims - o.Shims}
}

func (e *env) cpu() procCPU {
	var c procCPU
	if e.server != nil {
		c.Server = cpuSeconds(e.server.pid())
	}
	if e.agent != nil {
		c.Agent = cpuSeconds(e.agent.pid())
	}
	if n := e.nodeProc(); n != nil {
		for _, pid := range childrenNamed(n.pid(), "containerd") {
			c.Containerd += cpuSeconds(pid)
		}
	}
	for _, pid := range e.shims() {
		c.Shims += cpuSeconds(pid)
	}
	return c
}
