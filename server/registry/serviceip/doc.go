// Package serviceip serves networking.k8s.io/v1 ServiceCIDR and IPAddress,
// the objects that describe the Service IP address space, as
// kube-apiserver v1.37 does (pkg/registry/networking/servicecidr and
// ipaddress): both cluster-scoped; ServiceCIDRs with a status subresource,
// one CIDR per IP family, CIDRs immutable but for adding the second family;
// IPAddresses named by the canonical form of their address, with an
// immutable parentRef. The API server creates the default ServiceCIDR
// "kubernetes" from --service-cidr; server/controllers/servicecidr keeps
// their Ready condition and the IPAddress objects of allocated ClusterIPs.
package serviceip
