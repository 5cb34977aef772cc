package reliability

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Kind is the kind of a client operation.
type Kind uint8

// The operations of the load.
const (
	Get Kind = iota
	Create
	Update // CAS: Update with metadata.resourceVersion = Input.RV
	Delete // Input.RV 0: unconditional; else a resourceVersion precondition
)

func (k Kind) String() string {
	return [...]string{"get", "create", "update", "delete"}[k]
}

// Result is the outcome of an operation.
type Result uint8

// Outcomes. Unknown (a timeout, a broken connection, a 5xx) may or may not
// have taken effect, at any time after the call.
const (
	OK       Result = iota
	Conflict        // 409: create of an existing key, or a stale resourceVersion
	NotFound        // 404
	Unknown
)

func (r Result) String() string {
	return [...]string{"ok", "conflict", "notfound", "unknown"}[r]
}

// Input is what a client asked for.
type Input struct {
	Kind  Kind
	Key   string
	Value string // create/update: a value unique to this operation
	RV    int64  // update/delete precondition (0: none for delete)
}

// Output is what the client got back.
type Output struct {
	Result Result
	Value  string // get: the value read
	RV     int64  // get: the object's resourceVersion; writes: the new revision (0 if not known)
}

// Op is one operation of the history, with call and return times relative
// to the start of the run. Unknown operations are given Return = +inf.
type Op struct {
	Client int
	Input  Input
	Output Output
	Call   time.Duration
	Return time.Duration
}

// state is one key: its value and resourceVersion (rvUnknown after a write
// whose outcome was not observed), and floor, the highest revision ever
// observed for the key: every later write of it gets a higher one.
type state struct {
	exists bool
	value  string
	rv     int64
	floor  int64
}

const rvUnknown = -1

func (s state) rvMatches(rv int64) bool { return s.rv == rvUnknown || s.rv == rv }

// newer reports whether rv may be a new write's revision after s.
func (s state) newer(rv int64) bool { return rv == 0 || rv > s.floor }

func (s state) with(exists bool, value string, rv int64) state {
	n := state{exists: exists, value: value, rv: rv, floor: s.floor}
	if rv > n.floor {
		n.floor = rv
	}
	if !exists {
		n.value, n.rv = "", 0
	}
	return n
}

// step returns the states that may follow s after the operation; none when
// the operation could not have returned out from s.
func step(s state, in Input, out Output) []state {
	switch in.Kind {
	case Get:
		return stepGet(s, out)
	case Create:
		return stepCreate(s, in, out)
	case Update:
		return stepUpdate(s, in, out)
	case Delete:
		return stepDelete(s, in, out)
	}
	return nil
}

func stepGet(s state, out Output) []state {
	switch {
	case out.Result == NotFound && !s.exists:
		return []state{s}
	case out.Result == OK && s.exists && s.value == out.Value && s.rvMatches(out.RV):
		return []state{s.with(true, s.value, out.RV)}
	}
	return nil
}

func stepCreate(s state, in Input, out Output) []state {
	switch out.Result {
	case OK:
		if !s.exists && s.newer(out.RV) {
			return []state{s.with(true, in.Value, rvOrUnknown(out.RV))}
		}
	case Conflict:
		if s.exists {
			return []state{s}
		}
	case Unknown:
		if !s.exists {
			return []state{s, s.with(true, in.Value, rvUnknown)}
		}
		return []state{s}
	}
	return nil
}

func stepUpdate(s state, in Input, out Output) []state {
	switch out.Result {
	case OK:
		if s.exists && s.rvMatches(in.RV) && s.newer(out.RV) {
			return []state{s.with(true, in.Value, rvOrUnknown(out.RV))}
		}
	case Conflict:
		// 409 when the precondition fails; also when the key is gone (a
		// delete won the race after the server read it: upstream says 404).
		if !s.exists || s.rv == rvUnknown || s.rv != in.RV {
			return []state{s}
		}
	case NotFound:
		if !s.exists {
			return []state{s}
		}
	case Unknown:
		if s.exists && s.rvMatches(in.RV) {
			return []state{s, s.with(true, in.Value, rvUnknown)}
		}
		return []state{s}
	}
	return nil
}

func stepDelete(s state, in Input, out Output) []state {
	applies := s.exists && (in.RV == 0 || s.rvMatches(in.RV))
	switch out.Result {
	case OK:
		if applies && s.newer(out.RV) {
			return []state{s.with(false, "", out.RV)}
		}
	case Conflict: // only with a precondition; as for update, also when gone
		if in.RV != 0 && (!s.exists || s.rv == rvUnknown || s.rv != in.RV) {
			return []state{s}
		}
	case NotFound:
		if !s.exists {
			return []state{s}
		}
	case Unknown:
		if applies {
			return []state{s, s.with(false, "", 0)}
		}
		return []state{s}
	}
	return nil
}

func rvOrUnknown(rv int64) int64 {
	if rv == 0 {
		return rvUnknown
	}
	return rv
}

// Model is the porcupine model: one register per key (the history is
// partitioned by key), with create/CAS-update/delete semantics keyed by
// resourceVersion, and revisions that only grow per key.
func Model() porcupine.Model {
	nd := porcupine.NondeterministicModel{
		Partition: partitionByKey,
		Init:      func() []interface{} { return []interface{}{state{}} },
		Step: func(st, in, out interface{}) []interface{} {
			next := step(st.(state), in.(Input), out.(Output))
			res := make([]interface{}, len(next))
			for i := range next {
				res[i] = next[i]
			}
			return res
		},
		Equal: func(a, b interface{}) bool { return a.(state) == b.(state) },
		DescribeOperation: func(in, out interface{}) string {
			i, o := in.(Input), out.(Output)
			return fmt.Sprintf("%s(%s, %q, rv=%d) -> %s %q rv=%d", i.Kind, i.Key, i.Value, i.RV, o.Result, o.Value, o.RV)
		},
		DescribeState: func(st interface{}) string {
			s := st.(state)
			return fmt.Sprintf("exists=%v value=%q rv=%d floor=%d", s.exists, s.value, s.rv, s.floor)
		},
	}
	return nd.ToModel()
}

func partitionByKey(h []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	var keys []string
	for _, op := range h {
		k := op.Input.(Input).Key
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], op)
	}
	sort.Strings(keys)
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

// Porcupine converts the history; unknown operations never return.
func Porcupine(h []Op) []porcupine.Operation {
	out := make([]porcupine.Operation, 0, len(h))
	for _, op := range h {
		ret := int64(op.Return)
		if op.Output.Result == Unknown {
			ret = math.MaxInt64
		}
		out = append(out, porcupine.Operation{ClientId: op.Client, Input: op.Input, Output: op.Output,
			Call: int64(op.Call), Return: ret})
	}
	return out
}

// CheckResult is the verdict on a history.
type CheckResult struct {
	Result porcupine.CheckResult
	Info   porcupine.LinearizationInfo
	// DuplicateRVs lists revisions that two acknowledged writes both got.
	DuplicateRVs []int64
}

// Linearizable reports whether nothing is wrong.
func (r CheckResult) Linearizable() bool {
	return r.Result == porcupine.Ok && len(r.DuplicateRVs) == 0
}

// Check checks the history for linearizability (Unknown after timeout) and
// that no revision was handed to two acknowledged writes.
func Check(h []Op, timeout time.Duration) CheckResult {
	res, info := porcupine.CheckOperationsVerbose(Model(), Porcupine(h), timeout)
	return CheckResult{Result: res, Info: info, DuplicateRVs: duplicateRVs(h)}
}

func duplicateRVs(h []Op) []int64 {
	seen := map[int64]bool{}
	var dups []int64
	for _, op := range h {
		if op.Input.Kind == Get || op.Output.Result != OK || op.Output.RV == 0 {
			continue
		}
		if seen[op.Output.RV] {
			dups = append(dups, op.Output.RV)
		}
		seen[op.Output.RV] = true
	}
	return dups
}

// IllegalKeys checks each key on its own and describes the history of the
// first key that is not linearizable, in call order, for the test log.
func IllegalKeys(h []Op, timeout time.Duration) string {
	byKey := map[string][]Op{}
	for _, op := range h {
		byKey[op.Input.Key] = append(byKey[op.Input.Key], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ops := byKey[k]
		if porcupine.CheckOperationsTimeout(Model(), Porcupine(ops), timeout) != porcupine.Illegal {
			continue
		}
		return describeIllegal(k, ops, timeout)
	}
	return "no single key is illegal on its own"
}

// describeIllegal prints the longest linearizable prefix's end and the
// operations that could not follow it.
func describeIllegal(key string, ops []Op, timeout time.Duration) string {
	pops := Porcupine(ops)
	_, info := porcupine.CheckOperationsVerbose(Model(), pops, timeout)
	var longest []int
	for _, part := range info.PartialLinearizations() {
		for _, lin := range part {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
	}
	in := map[int]bool{}
	for _, i := range longest {
		in[i] = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "key %s is not linearizable (%d operations); the longest linearizable prefix has %d, ending:\n",
		key, len(ops), len(longest))
	for _, i := range longest[max(0, len(longest)-8):] {
		b.WriteString(describeOp(ops[i]))
	}
	// The operation that could not be placed: the earliest-returning one left.
	first := -1
	for i := range ops {
		if !in[i] && (first < 0 || pops[i].Return < pops[first].Return) {
			first = i
		}
	}
	if first >= 0 {
		b.WriteString("then none of these fits; first to return:\n")
		b.WriteString(describeOp(ops[first]))
		b.WriteString("concurrent with it:\n")
		for i := range ops {
			if !in[i] && i != first && pops[i].Call <= pops[first].Return {
				b.WriteString(describeOp(ops[i]))
			}
		}
	}
	return b.String()
}

func describeOp(op Op) string {
	return fmt.Sprintf("  [%v, %v] client %d: %s(%q, rv=%d) -> %s %q rv=%d\n", op.Call, op.Return, op.Client,
		op.Input.Kind, op.Input.Value, op.Input.RV, op.Output.Result, op.Output.Value, op.Output.RV)
}
