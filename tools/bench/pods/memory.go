package main

// procMem is the resident memory of the processes under test.
type procMem struct {
	Server, Agent, Containerd mem
	ServerAgent               mem // Server + Agent
}

func (e *env) memory() procMem {
	var m procMem
	if e.server != nil {
		m.Server, _ = readMem(e.server.pid())
	}
	if e.agent != nil {
		m.Agent, _ = readMem(e.agent.pid())
		for _, pid := range childrenNamed(e.agent.pid(), "containerd") {
			c, _ := readMem(pid)
			m.Containerd = m.Containerd.add(c)
		}
	}
	m.ServerAgent = m.Server.add(m.Agent)
	return m
}

// procCPU is CPU seconds used by the server and the agent.
type procCPU struct{ Server, Agent float64 }

func (c procCPU) sub(o procCPU) procCPU { return procCPU{c.Server - o.Server, c.Agent - o.Agent} }

func (e *env) cpu() procCPU {
	var c procCPU
	if e.server != nil {
		c.Server = cpuSeconds(e.server.pid())
	}
	if e.agent != nil {
		c.Agent = cpuSeconds(e.agent.pid())
	}
	return c
}
