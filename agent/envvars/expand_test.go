package envvars

import (
	"reflect"
	"testing"
)

// Ported from the kubelet's third_party/forked/golang/expansion tests.
func TestMapReference(t *testing.T) {
	envs := [][2]string{{"FOO", "bar"}, {"ZOO", "$(FOO)-1"}, {"BLU", "$(ZOO)-2"}}
	declared := map[string]string{"FOO": "bar", "ZOO": "$(FOO)-1", "BLU": "$(ZOO)-2"}
	mapping := MappingFuncFor(declared, map[string]string{})
	for _, e := range envs {
		declared[e[0]] = Expand(e[1], mapping)
	}
	want := map[string]string{"FOO": "bar", "ZOO": "bar-1", "BLU": "bar-1-2"}
	if !reflect.DeepEqual(declared, want) {
		t.Fatalf("got %v, want %v", declared, want)
	}
}

func TestMapping(t *testing.T) {
	doExpansionTest(t, MappingFuncFor(map[string]string{
		"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": "",
	}))
}

func TestMappingDual(t *testing.T) {
	doExpansionTest(t, MappingFuncFor(
		map[string]string{"VAR_A": "A", "VAR_EMPTY": ""},
		map[string]string{"VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)"}))
}

func doExpansionTest(t *testing.T, mapping func(string) string) {
	cases := []struct{ name, input, expected string }{
		{"whole string", "$(VAR_A)", "A"},
		{"repeat", "$(VAR_A)-$(VAR_A)", "A-A"},
		{"beginning", "$(VAR_A)-1", "A-1"},
		{"middle", "___$(VAR_B)___", "___B___"},
		{"end", "___$(VAR_C)", "___C"},
		{"compound", "$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"},
		{"escape & expand", "$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"},
		{"compound escape", "$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"},
		{"mixed in escapes", "f000-$$VAR_A", "f000-$VAR_A"},
		{"backslash escape ignored", "foo\\$(VAR_C)bar", "foo\\Cbar"},
		{"backslash escape ignored 2", "foo\\\\$(VAR_C)bar", "foo\\\\Cbar"},
		{"lots of backslashes", "foo\\\\\\\\$(VAR_A)bar", "foo\\\\\\\\Abar"},
		{"nested var references", "$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"},
		{"nested var references second type", "$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"},
		{"value is a reference", "$(VAR_REF)", "$(VAR_A)"},
		{"value is a reference x 2", "%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"},
		{"empty var", "foo$(VAR_EMPTY)bar", "foobar"},
		{"unterminated expression", "foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"},
		{"expression without operator", "f00__(VAR_A)__", "f00__(VAR_A)__"},
		{"shell special vars pass through", "$?_boo_$!", "$?_boo_$!"},
		{"bare operators are ignored", "$VAR_A", "$VAR_A"},
		{"undefined vars are passed through", "$(VAR_DNE)", "$(VAR_DNE)"},
		{"multiple (even) operators, var undefined", "$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"},
		{"multiple (even) operators, var defined", "$$$$$$(VAR_A)", "$$$(VAR_A)"},
		{"multiple (odd) operators, var undefined", "$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"},
		{"multiple (odd) operators, var defined", "$$$$$$$(VAR_A)", "$$$A"},
		{"missing open expression", "$VAR_A)", "$VAR_A)"},
		{"shell syntax ignored", "${VAR_A}", "${VAR_A}"},
		{"trailing incomplete expression not consumed", "$(VAR_B)_______$(A", "B_______$(A"},
		{"trailing incomplete expression, no content", "$(VAR_C)_______$(", "C_______$("},
		{"operator at end of input string is preserved", "$(VAR_A)foobarzab$", "Afoobarzab$"},
		{"shell escaped incomplete expr", "foo-\\$(VAR_A", "foo-\\$(VAR_A"},
		{"lots of $( in middle", "--$($($($($--", "--$($($($($--"},
		{"lots of $( in beginning", "$($($($($--foo$(", "$($($($($--foo$("},
		{"lots of $( at end", "foo0--$($($($(", "foo0--$($($($("},
		{"escaped operators in variable names are not escaped", "$(foo$$var)", "$(foo$$var)"},
		{"newline not expanded", "\n", "\n"},
		{"dollar sign followed by non-ASCII UTF-8 character", "$£FOO", "$£FOO"},
		{"dollar sign followed by multi-byte UTF-8 character in middle", "prefix-$€-suffix", "prefix-$€-suffix"},
		{"dollar sign followed by Chinese character", "$中文", "$中文"},
	}
	for _, tc := range cases {
		if got := Expand(tc.input, mapping); got != tc.expected {
			t.Errorf("%v: expected %q, got %q", tc.name, tc.expected, got)
		}
	}
}

func TestExpandCommand(t *testing.T) {
	env := []string{"VAR_A=A", "VAR_B=B", "EMPTY=", "EQ=x=y"}
	cases := []struct {
		name              string
		cmd, args         []string
		wantCmd, wantArgs []string
	}{
		{"nil stays nil", nil, nil, nil, nil},
		{"command only", []string{"echo", "$(VAR_A)"}, nil, []string{"echo", "A"}, nil},
		{"args only", nil, []string{"-x=$(VAR_B)", "$$(VAR_B)"}, nil, []string{"-x=B", "$(VAR_B)"}},
		{"undefined kept", []string{"$(NOPE)"}, []string{"$(EMPTY)x"}, []string{"$(NOPE)"}, []string{"x"}},
		{"value with equals", []string{"$(EQ)"}, nil, []string{"x=y"}, nil},
	}
	for _, tc := range cases {
		c, a := ExpandCommand(tc.cmd, tc.args, env)
		if !reflect.DeepEqual(c, tc.wantCmd) || !reflect.DeepEqual(a, tc.wantArgs) {
			t.Errorf("%s: got %q %q, want %q %q", tc.name, c, a, tc.wantCmd, tc.wantArgs)
		}
	}
}

func TestExpandSubPath(t *testing.T) {
	env := []string{"POD=p1", "EMPTY="}
	cases := []struct {
		expr, want string
		wantErr    bool
	}{
		{"logs/$(POD)", "logs/p1", false},
		{"$(POD)/$$(POD)", "p1/$(POD)", false},
		{"$(MISSING)", "", true},
		{"$(EMPTY)", "", true},
		{"plain", "plain", false},
	}
	for _, tc := range cases {
		got, err := ExpandSubPath(tc.expr, env)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q, err=%v", tc.expr, got, err, tc.want, tc.wantErr)
		}
	}
}
