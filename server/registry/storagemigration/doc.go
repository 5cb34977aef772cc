// Package storagemigration serves storagemigration.k8s.io/v1
// StorageVersionMigration as kube-apiserver v1.37 does
// (pkg/registry/storagemigration): cluster-scoped, the status cleared on
// create and kept on spec writes, the spec immutable, a status subresource
// that changes nothing else (status.resourceVersion fixed once set,
// Succeeded and Failed never both True nor taken back), upstream's
// validation and kubectl's columns. The migrations themselves are run by
// server/controllers/storageversionmigration.
package storagemigration
