// Package storageversionmigration runs StorageVersionMigrations
// (storagemigration.k8s.io/v1) the way kube-controller-manager's
// migration runner, resource-version and migrator controllers do, as one
// level-based loop per object:
//
//  1. the oldest pending migration of a resource is marked Running (one
//     at a time per resource); a CRD's resource also gets the CRD's
//     StorageMigrating condition;
//  2. the resource is looked up in discovery (a missing one is retried for
//     a minute after the migration's creation, then Failed; one that cannot
//     be listed, updated and patched fails at once) and the current
//     resourceVersion of its collection is recorded in status;
//  3. every object whose resourceVersion is not newer is written back with
//     a merge patch that changes nothing but must match that
//     resourceVersion: the API server re-encodes it in the storage version
//     (a custom resource stored in an older version is converted); objects
//     changed or deleted meanwhile need no migration;
//  4. Succeeded (or Failed with the error), then Running goes False; a
//     CRD's status.storedVersions is cut to the storage version after a
//     success, unless the CRD changed while the migration ran.
package storageversionmigration
