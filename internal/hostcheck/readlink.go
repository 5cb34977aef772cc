package hostcheck

import "path/filepath"

// readlinkAll resolves every symlink of p (iptables -> alternatives ->
// xtables-nft-multi).
func readlinkAll(p string) (string, error) { return filepath.EvalSymlinks(p) }
