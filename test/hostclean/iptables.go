package hostclean

import (
	"os/exec"
	"strings"
)

// IPTablesChains removes every chain whose name starts with prefix from
// the filter, nat, mangle and raw tables of iptables-nft and
// iptables-legacy, and every rule elsewhere that jumps to one. Tests give
// each agent its own prefix (ORCHT<id>-), so whatever the pod network,
// host ports, service proxy or network policy left behind after a crash
// goes with it, and nothing else is touched.
func IPTablesChains(logf func(format string, args ...any), prefix string) {
	if prefix == "" {
		return
	}
	for _, cmd := range []string{"iptables", "iptables-legacy"} {
		if _, err := exec.LookPath(cmd); err != nil {
			continue
		}
		for _, table := range []string{"filter", "nat", "mangle", "raw"} {
			cleanTable(logf, cmd, table, prefix)
		}
	}
}

func cleanTable(logf func(format string, args ...any), cmd, table, prefix string) {
	out, err := exec.Command(cmd+"-save", "-t", table).Output()
	if err != nil {
		return
	}
	var chains []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && strings.HasPrefix(f[0], ":"+prefix):
			chains = append(chains, f[0][1:])
		case len(f) > 2 && f[0] == "-A" && !strings.HasPrefix(f[1], prefix) && jumpsTo(f, prefix):
			args := append([]string{"-t", table, "-D"}, splitRule(line[3:])...)
			if out, err := exec.Command(cmd, args...).CombinedOutput(); err != nil {
				logf("hostclean: %s %v: %v %s", cmd, args, err, out)
			}
		}
	}
	for _, c := range chains {
		_ = exec.Command(cmd, "-t", table, "-F", c).Run()
	}
	for _, c := range chains {
		if out, err := exec.Command(cmd, "-t", table, "-X", c).CombinedOutput(); err != nil {
			logf("hostclean: %s -t %s -X %s: %v %s", cmd, table, c, err, out)
		}
	}
}

func jumpsTo(fields []string, prefix string) bool {
	for i := 0; i+1 < len(fields); i++ {
		if (fields[i] == "-j" || fields[i] == "-g") && strings.HasPrefix(fields[i+1], prefix) {
			return true
		}
	}
	return false
}

// splitRule splits an iptables-save rule into arguments, keeping quoted
// comments whole.
func splitRule(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ' ' && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
