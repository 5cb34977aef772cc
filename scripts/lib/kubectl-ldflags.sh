#!/bin/sh
# kubectl-ldflags.sh: print the -X linker flags that give the kubectl
# embedded in orch (`orch kubectl version --client`) the version of the
# k8s.io/kubectl module in go.mod (v0.37.2 -> v1.37.2), as upstream's
# release builds set them. Used by the Makefile and scripts/release.sh.
set -eu
here=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd)
mod=$(awk '$1 == "k8s.io/kubectl" { print $2; exit }' "$here/go.mod")
case "$mod" in
v0.*.*) ;;
*) echo "kubectl-ldflags.sh: no k8s.io/kubectl v0.x.y in go.mod" >&2; exit 1 ;;
esac
minor=$(echo "$mod" | cut -d. -f2)
git="v1.${mod#v0.}"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	printf ' -X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s -X %s.gitTreeState=clean' "$pkg" "$git" "$pkg" "$pkg" "$minor" "$pkg"
done
printf '\n'
