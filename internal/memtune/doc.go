// Package memtune keeps orch's idle memory small on 1-4 GB boards.
//
// Two things, both called once from the command line (internal/cli):
//
//   - Runtime defaults: a lower GC percent for the agent and for a server
//     that runs its own agent (AgentGCPercent), lower still while the
//     process is idle (IdleGCPercent: after each collection, a finalizer
//     picks the percent from the time since the previous one, so a burst
//     of pods is collected at AgentGCPercent), unless the operator set
//     GOGC in the environment, which always wins.
//   - Settle, once start-up is over: a full GC that returns free heap pages to
//     the kernel (debug.FreeOSMemory), and MADV_PAGEOUT of the binary's
//     read-only mappings (code, read-only data, the pclntab). Go runs every
//     package's init and all start-up code once; with the kernel's fault-around
//     and large page-cache folios each of those touches maps 64 KiB or more of
//     the ~100 MB binary, so a started orch holds 50+ MiB of file pages of
//     which it uses a tenth afterwards. MADV_PAGEOUT reclaims the clean pages
//     that only this process maps: they leave the page cache (memory is really
//     freed, not only unmapped), and whatever is still used is faulted back in
//     from the file, one page at a time (MADV_RANDOM is set first so a fault
//     does not read ahead megabytes). Pages shared with another process are
//     left alone by the kernel. Contents cannot change: the mappings are
//     read-only views of the executable's inode.
//
// ReleaseProcess does the page-out for another process (process_madvise):
// the agent calls it for the containerd it runs, which cannot do it itself.
//
// ORCH_MEMTUNE=off turns all of it off; ORCH_MEMTUNE_SETTLE=<duration> moves
// the settle point (default 30s after start, "0" settles immediately).
package memtune
