package envvars

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

const (
	operator        = '$'
	referenceOpener = '('
	referenceCloser = ')'
)

// MappingFuncFor returns a lookup for Expand over the given maps (first match
// wins); an undefined name maps to its own reference "$(NAME)", so undefined
// references are left as written, as in the kubelet.
func MappingFuncFor(context ...map[string]string) func(string) string {
	return func(input string) string {
		for _, vars := range context {
			if val, ok := vars[input]; ok {
				return val
			}
		}
		return string(operator) + string(referenceOpener) + input + string(referenceCloser)
	}
}

// Expand replaces $(VAR) references in input using mapping. "$$" is an
// escaped "$"; anything else after a "$" is copied as is. This is the
// kubelet's third_party/forked/golang/expansion algorithm.
func Expand(input string, mapping func(string) string) string {
	var buf strings.Builder
	checkpoint := 0
	for cursor := 0; cursor < len(input); cursor++ {
		if input[cursor] == operator && cursor+1 < len(input) {
			buf.WriteString(input[checkpoint:cursor])
			read, isVar, advance := tryReadVariableName(input[cursor+1:])
			if isVar {
				buf.WriteString(mapping(read))
			} else {
				buf.WriteString(read)
			}
			cursor += advance
			checkpoint = cursor + 1
		}
	}
	return buf.String() + input[checkpoint:]
}

// tryReadVariableName reads a variable name after an operator; it returns
// the text read, whether it is a name to map, and the bytes consumed.
func tryReadVariableName(input string) (string, bool, int) {
	r, size := utf8.DecodeRuneInString(input)
	switch r {
	case operator:
		return input[0:size], false, size
	case referenceOpener:
		for i := 1; i < len(input); i++ {
			if input[i] == referenceCloser {
				return input[1:i], true, i + 1
			}
		}
		return string(operator) + string(referenceOpener), false, 1
	default:
		return string(operator) + string(r), false, size
	}
}

// ToMap turns KEY=VALUE entries into a map (a later entry wins).
func ToMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// ExpandCommand expands $(VAR) references in a container's command and args
// with the resolved environment env (KEY=VALUE), like the kubelet's
// ExpandContainerCommandAndArgs. nil stays nil.
func ExpandCommand(cmd, args []string, env []string) ([]string, []string) {
	mapping := MappingFuncFor(ToMap(env))
	return expandAll(cmd, mapping), expandAll(args, mapping)
}

func expandAll(in []string, mapping func(string) string) []string {
	if len(in) == 0 {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = Expand(s, mapping)
	}
	return out
}

// ExpandSubPath expands a volumeMount's subPathExpr with the resolved
// environment; like the kubelet, a reference to an undefined or empty
// variable is an error.
func ExpandSubPath(expr string, env []string) (string, error) {
	vars := ToMap(env)
	missing := map[string]struct{}{}
	out := Expand(expr, func(key string) string {
		v, ok := vars[key]
		if !ok || v == "" {
			missing[key] = struct{}{}
		}
		return v
	})
	if len(missing) > 0 {
		names := make([]string, 0, len(missing))
		for k := range missing {
			names = append(names, k)
		}
		sort.Strings(names)
		return "", fmt.Errorf("subPathExpr %q: missing value for %s", expr, strings.Join(names, ", "))
	}
	return out, nil
}
