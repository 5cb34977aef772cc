// Package servicecidr keeps the objects that describe the Service IP
// address space, as kube-controller-manager's service-cidr-controller and
// kube-apiserver's IP repair loop do:
//
//   - New: every ServiceCIDR gets the networking.k8s.io/service-cidr-finalizer
//     and Ready=True; a deleted one keeps its finalizer (Ready=False,
//     reason Terminating) while an allocated ClusterIP lies only in it,
//     and for 10 seconds after that, so no allocation that still saw it is
//     left without a range (as upstream). The allocator (server/registry)
//     hands out addresses of every ServiceCIDR not being deleted: asked-for
//     ones anywhere, random ones once --service-cidr is full.
//   - NewIPAddresses: every allocated ClusterIP has an IPAddress object
//     (parentRef the Service, labels ipaddress.kubernetes.io/managed-by
//     ipallocator.k8s.io and the IP family), and IPAddresses of that manager
//     whose Service no longer holds the address go. orch's allocator keeps
//     its own reservation records in the Service's transaction; the
//     IPAddresses mirror them, so `kubectl get ipaddresses` lists what is
//     in use, and an IPAddress someone else created keeps the allocator
//     off its address.
package servicecidr
