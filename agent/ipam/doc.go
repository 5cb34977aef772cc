// Package ipam allocates pod IPs from a node's podCIDR and remembers them on
// disk, in the style of the CNI host-local plugin.
//
// The store is a directory: one file per allocated IP, named after the IP
// and holding the owner (the pod UID), written to a temporary file, fsynced
// and linked into place so that it appears whole or not at all; and a
// "last_reserved_ip" marker so the next allocation starts after the last one
// and a released IP is not handed out again at once. The network address, the
// gateway (the first host address, which the node's bridge holds) and the
// broadcast address are never allocated.
//
// A Store is safe for concurrent use by goroutines (a mutex) and by processes
// sharing the directory (flock on a lock file), and it needs no in-memory
// state beyond the directory, so it survives restarts as it is.
package ipam
