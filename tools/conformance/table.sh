#!/bin/bash
# table.sh REPORT.json NODES COMMIT prints the markdown table of a run for
# docs/conformance.md: one row per area (the spec's top-level container,
# e.g. "[sig-node] Pods"), then the failed specs.
set -euo pipefail
REPORT=$1 NODES=${2:-?} COMMIT=${3:-?}
jq -r --arg nodes "$NODES" --arg commit "$COMMIT" '
  [.[].SpecReports[]? | select(.LeafNodeType == "It" and .State != "skipped")] as $s
  | ($s | map(select(.State == "passed")) | length) as $p
  | "Run of \((.[0].StartTime // "?") | sub("\\..*"; "")) UTC, orch \($commit), \($nodes) node(s): \($s | length) specs, \($p) passed, \(($s | length) - $p) failed.",
    "",
    "| area | specs | passed | failed |",
    "|---|---:|---:|---:|",
    ($s | group_by(.ContainerHierarchyTexts[0]) | map({area: .[0].ContainerHierarchyTexts[0], n: length,
        p: (map(select(.State == "passed")) | length)}) | sort_by(.area)[]
      | "| \(.area) | \(.n) | \(.p) | \(.n - .p) |"),
    "",
    (if ($s | length) == 0 then "No spec ran (an interrupted run?)." elif ($s | map(select(.State != "passed")) | length) > 0 then "Failed:" else "Every spec passed." end),
    ($s | map(select(.State != "passed")) | sort_by((.ContainerHierarchyTexts + [.LeafNodeText]) | join(" "))[]
      | "- [\(.State)] \((.ContainerHierarchyTexts + [.LeafNodeText]) | join(" "))")
' "$REPORT"
