// Package endpoints holds the Endpoints and EndpointSlice controllers of
// kube-controller-manager:
//
//   - for a Service with a selector, the addresses of the pods it selects
//     (ready ones as addresses, others as notReadyAddresses unless
//     publishNotReadyAddresses; terminal pods and pods without an IP left
//     out), with every service port's targetPort resolved per pod (numbers,
//     or names looked up in the pod's container ports);
//   - the same as EndpointSlices (label kubernetes.io/service-name,
//     managed-by endpointslice-controller.k8s.io, owned by the Service;
//     ready/serving/terminating conditions, nodeName, targetRef, hostname
//     for pods whose subdomain is the Service), one slice per distinct port
//     set and at most 100 endpoints each;
//   - for a Service without a selector, its hand-written Endpoints are left
//     alone and mirrored into EndpointSlices (managed-by
//     endpointslicemirroring-controller.k8s.io), unless they carry
//     endpointslice.kubernetes.io/skip-mirror (the `kubernetes` Service's,
//     whose slice the API server writes itself).
//
// Both reconcile one Service key at a time from the shared cache.
package endpoints
