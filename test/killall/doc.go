// Package killall tests the orch-killall.sh and orch-uninstall.sh scripts
// scripts/install.sh writes: against a real `orch server` and the host
// objects an agent makes (created with the agent's own network code), all
// under names unique to the test, while a second set of objects under other
// names shows that nothing else on the host is touched. Root only.
package killall
