// Package deadcode checks what keeps the orch binary small: that the Go
// linker can drop the methods nothing calls. One reachable
// reflect.Value.MethodByName (or Method, or reflect.Type's) with a name
// known only at run time makes it keep every exported method of every type
// that may sit in an interface; the standard library's text/template has
// such a call, and orch's builds replace it through
// scripts/lib/go-build-flags.sh's overlay with a lookup of the names in
// scripts/lib/overlay/template-methods.txt.
//
// The tests build orch as its build scripts do and fail when the linker
// sees a dynamic method lookup again (a new dependency, a Go upgrade that
// changes text/template), when a package orch links has templates calling a
// name the list lacks, and when kubectl's or ctr's help, the templates orch
// runs most, print a template error for any of their commands.
package deadcode
