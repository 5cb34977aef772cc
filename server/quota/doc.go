// Package quota is the pure arithmetic of ResourceQuota and LimitRange,
// shared by the API server's admission (which charges a quota in the same
// datastore transaction as the object it admits) and the resource quota
// controller (which recounts status.used from the objects that exist):
//
//   - Usage: what one object consumes (pods, count/pods, requests.cpu,
//     limits.memory, services.nodeports, requests.storage, count/<r>.<g>…);
//   - Matches/Check: which quotas an object falls under (scopes) and
//     whether used+usage stays within hard, with kube-apiserver's messages;
//   - LimitRange: defaults and min/max/ratio checks for containers, pods
//     and claims, as the LimitRanger admission plugin applies them.
package quota
