package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// fakeBackend is an in-memory iptables: chains and their rule lines.
type fakeBackend struct {
	tables   map[string]map[string][]string
	jumps    []jump
	restores [][]byte
	failNext bool
	ensured  int  // EnsureJump calls
	nft      bool // takes cache hints ("-S" lines)
	noList   bool // but rejects them (an iptables without -S in restores)
}

var _ backend = (*fakeBackend)(nil)

func newFakeBackend() *fakeBackend {
	return &fakeBackend{tables: map[string]map[string][]string{tableNAT: {}, tableFilter: {}}}
}

// Restore applies the input like iptables-restore --noflush, all or nothing.
func (f *fakeBackend) Restore(input []byte) error {
	f.restores = append(f.restores, input)
	if f.failNext {
		f.failNext = false
		return ErrRestore
	}
	next := map[string]map[string][]string{}
	for t, cs := range f.tables {
		next[t] = map[string][]string{}
		for c, rs := range cs {
			next[t][c] = slices.Clone(rs)
		}
	}
	var table string
	jumps := slices.Clone(f.jumps)
	sc := bufio.NewScanner(bytes.NewReader(input))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "*"):
			table = l[1:]
		case l == "COMMIT":
		case l == "-S" && f.nft && !f.noList: // the cache hint: a listing, no change
		case strings.HasPrefix(l, ":"):
			next[table][strings.Fields(l[1:])[0]] = []string{}
		case strings.HasPrefix(l, "-A "):
			c := strings.Fields(l)[1]
			if _, ok := next[table][c]; !ok {
				return fmt.Errorf("%w: no chain %s", ErrRestore, c)
			}
			next[table][c] = append(next[table][c], l)
		case strings.HasPrefix(l, "-I "):
			jumps = append([]jump{parseJump(table, l)}, jumps...)
		case strings.HasPrefix(l, "-X "):
			c := strings.TrimPrefix(l, "-X ")
			if rs, ok := next[table][c]; !ok || len(rs) > 0 {
				return fmt.Errorf("%w: deleting missing or non-empty chain %s", ErrRestore, c)
			}
			delete(next[table], c)
		default:
			return fmt.Errorf("%w: bad line %q", ErrRestore, l)
		}
	}
	for t, cs := range next { // every jump target must exist
		for _, rs := range cs {
			for _, r := range rs {
				if i := strings.Index(r, " -j "); i > 0 {
					target := strings.Fields(r[i+4:])[0]
					if _, ok := cs[target]; !ok && strings.Contains(target, "-") {
						return fmt.Errorf("%w: %s references missing chain %s", ErrRestore, t, target)
					}
				}
			}
		}
	}
	f.tables, f.jumps = next, jumps
	return nil
}

// Save renders the table as iptables-save does (chains, then rules,
// jumps in the built-in chains included).
func (f *fakeBackend) Save(table string) ([]byte, error) {
	var b strings.Builder
	b.WriteString("*" + table + "\n")
	chains := make([]string, 0, len(f.tables[table]))
	for c := range f.tables[table] {
		chains = append(chains, c)
	}
	slices.Sort(chains)
	for _, c := range chains {
		b.WriteString(":" + c + " - [0:0]\n")
	}
	for _, j := range f.jumps {
		if j.table == table {
			b.WriteString(j.line() + "\n")
		}
	}
	for _, c := range chains {
		for _, r := range f.tables[table][c] {
			b.WriteString(r + "\n")
		}
	}
	b.WriteString("COMMIT\n")
	return []byte(b.String()), nil
}

func (f *fakeBackend) EnsureJump(j jump) error {
	f.ensured++
	if _, ok := f.tables[j.table][j.rule[len(j.rule)-1]]; !ok {
		return fmt.Errorf("jump to missing chain %s", j.rule[len(j.rule)-1])
	}
	for _, have := range f.jumps {
		if have.table == j.table && have.from == j.from && slices.Equal(have.rule, j.rule) {
			return nil
		}
	}
	f.jumps = append([]jump{j}, f.jumps...)
	return nil
}

func (f *fakeBackend) DeleteJump(j jump) error {
	f.jumps = slices.DeleteFunc(f.jumps, func(h jump) bool {
		return h.table == j.table && h.from == j.from && slices.Equal(h.rule, j.rule)
	})
	return nil
}

func (f *fakeBackend) HasRandomFully() bool { return true }

func (f *fakeBackend) NFT() bool { return f.nft }

// fakeConntrack records deletions.
type fakeConntrack struct{ calls []string }

func (c *fakeConntrack) DeleteUDP(dst string, dport int32, src string) error {
	c.calls = append(c.calls, fmt.Sprintf("%s:%d<-%s", dst, dport, src))
	return nil
}

// parseJump reads "-I FROM 1 args..." (args quoted as iptables-save does).
func parseJump(table, line string) jump {
	var args []string
	var cur strings.Builder
	quoted := false
	for _, r := range line + " " {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ' ' && !quoted:
			if cur.Len() > 0 {
				args = append(args, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	return jump{table: table, from: args[1], rule: args[3:]}
}
