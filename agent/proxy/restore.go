package proxy

import (
	"bytes"
	"sort"
	"strings"
)

// applied is what the kernel holds, as far as the proxy knows: per table,
// each owned chain's rules joined by newlines.
type applied map[string]map[string]string

// unknownRules stands for a chain found in the kernel whose rules are not
// known: it is always rewritten.
const unknownRules = "\x00unknown"

func (a applied) clone() applied {
	out := applied{}
	for t, chains := range a {
		out[t] = make(map[string]string, len(chains))
		for c, v := range chains {
			out[t][c] = v
		}
	}
	return out
}

// plan is one iptables-restore transaction.
type plan struct {
	input    []byte
	next     applied  // the state once input is applied
	written  int      // chains written
	deleted  int      // chains deleted
	rules    int      // rules written
	hinted   []string // tables given the cache hint
	noChange bool
}

// cacheHint decides whether a table's restore starts with "-S", given
// the number of lines and of chains named in it (nil: never).
//
// iptables-nft-restore --noflush (1.8.x) fetches only the chains a
// transaction names, and collects their names in a sorted linked list
// (nft-cache.c, cache_chain_list_insert), scanned from its head for every
// chain and jump target of every line: quadratic, ~1.3 s of CPU at 43,000
// lines naming 11,000 chains. A command naming no chain makes it fetch
// the whole table instead and skip the list; "-S" (list the table's rules,
// to stdout, which Restore drops) is such a command and changes nothing
// (-F, -X or -Z without a chain would touch other software's rules). Its cost is a dump of the rules already in the table, so it
// pays off for big writes into small tables (a sync from scratch).
type cacheHint func(table string, lines, chains int) bool

var tableOrder = []string{tableFilter, tableNAT}

// makePlan renders the iptables-restore --noflush input turning have into
// want: chains whose rules differ are declared (which flushes them) and
// rewritten, chains in have but not in want are deleted; chains that did
// not change are not mentioned, so they are left as they are.
func makePlan(want ruleset, have applied, hint cacheHint) plan {
	var buf bytes.Buffer
	p := plan{next: applied{}}
	for _, table := range tableOrder {
		p.next[table] = map[string]string{}
		var write, del []string
		for _, c := range want.chains(table) {
			joined := strings.Join(want[table][c], "\n")
			p.next[table][c] = joined
			if old, ok := have[table][c]; !ok || old != joined {
				write = append(write, c)
			}
		}
		for c := range have[table] {
			if _, ok := want[table][c]; !ok {
				del = append(del, c)
			}
		}
		if len(write) == 0 && len(del) == 0 {
			continue
		}
		sort.Strings(del)
		rules := 0
		for _, c := range write {
			rules += len(want[table][c])
		}
		listAll := hint != nil && hint(table, len(write)+2*len(del)+rules, len(write)+len(del))
		if listAll {
			p.hinted = append(p.hinted, table)
		}
		renderTable(&buf, table, want, write, del, listAll)
		p.written += len(write)
		p.deleted += len(del)
		p.rules += rules
	}
	p.input = buf.Bytes()
	p.noChange = buf.Len() == 0
	return p
}

func renderTable(buf *bytes.Buffer, table string, want ruleset, write, del []string, listAll bool) {
	buf.WriteString("*" + table + "\n")
	if listAll {
		buf.WriteString("-S\n")
	}
	// A chain is deleted by declaring it (which flushes it, dropping its
	// references to other chains) and then -X, as kube-proxy does.
	for _, list := range [][]string{write, del} {
		for _, c := range list {
			buf.WriteString(":" + c + " - [0:0]\n")
		}
	}
	for _, c := range write {
		for _, l := range want[table][c] {
			buf.WriteString(l)
			buf.WriteByte('\n')
		}
	}
	for _, c := range del {
		buf.WriteString("-X " + c + "\n")
	}
	buf.WriteString("COMMIT\n")
}
