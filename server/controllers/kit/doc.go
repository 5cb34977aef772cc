// Package kit is what every leader-only controller shares: one client over
// the API server's loopback transport, one SharedInformerFactory (the
// in-memory cache fed by the datastore's watch), one event broadcaster
// (events de-duplicated by count, as client-go's correlator does) and the
// work-queue plumbing of a level-based reconciler. Besides the shared
// factory a Context makes metadata-only informers (MetadataInformer) and
// field-selected factories (FilteredInformers) for controllers that need
// only objects' metadata or a few objects of a large set.
//
// A controller package exposes New(*kit.Context) (*Controller, error), which
// only registers informers and handlers, and Run(ctx) error, which runs its
// workers until ctx ends. The server builds every controller from one
// Context, starts the factory, waits for the caches and then runs them.
package kit
