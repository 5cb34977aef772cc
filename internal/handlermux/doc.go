// Package handlermux lets the event handlers registered on one shared
// informer share a single client-go listener.
//
// client-go gives every AddEventHandler call its own processorListener:
// two goroutines and a 1,024-slot ring buffer (16 KiB) allocated up front,
// and every event wakes each listener in turn. An orch server registers
// well over a hundred handlers, most of them on a few informers (Pods,
// ReplicaSets, Nodes ...), and each only puts a key on a work queue. A
// muxed informer registers one listener the first time a handler is added
// and hands each notification to its handlers in registration order.
//
// The fan-out is exact only for handlers that join before the first
// notification has been delivered, which is when controllers register
// theirs (before the factory starts). A handler added later, or one that
// asks for its own resync period, gets its own client-go listener as
// before, so it still receives the replay of the informer's current
// objects. A handler that blocks delays the others of its informer: the
// handlers sharing a listener must be as quick as work-queue adds.
//
// A Factory may wrap another Factory that outlives it (the server's cache,
// wrapped for one leadership term): its informers are the other's, Has
// reports both, and Close takes back every handler added through the
// wrapper while the informers run on.
package handlermux
