package registry

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func resourceQuotaRules() rules {
	return rules{
		validate: func(obj runtime.Object) field.ErrorList {
			q := obj.(*corev1.ResourceQuota)
			errs := validateResourceList(q.Spec.Hard, field.NewPath("spec", "hard"))
			for i, s := range q.Spec.Scopes {
				errs = append(errs, oneOf(s, field.NewPath("spec", "scopes").Index(i), corev1.ResourceQuotaScopeTerminating,
					corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
					corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity, corev1.ResourceQuotaScopeVolumeAttributesClass)...)
			}
			return errs
		},
		validateStatus: func(obj, _ runtime.Object) field.ErrorList {
			q := obj.(*corev1.ResourceQuota)
			return append(validateResourceList(q.Status.Hard, field.NewPath("status", "hard")),
				validateResourceList(q.Status.Used, field.NewPath("status", "used"))...)
		},
		columns: []metav1.TableColumnDefinition{
			col("Request", "string", 0, "Request represents a minimum amount of cpu/memory that a container may consume."),
			col("Limit", "string", 0, "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
			ageColumn(),
		},
		row: func(obj runtime.Object) []interface{} { return quotaRow(obj.(*corev1.ResourceQuota)) },
	}
}

func validateResourceList(rl corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k, q := range rl {
		errs = append(errs, validateResourceQuantity(string(k), q, p.Key(string(k)))...)
	}
	return errs
}

// quotaRow ports printResourceQuota.
func quotaRow(q *corev1.ResourceQuota) []interface{} {
	names := make([]string, 0, len(q.Status.Hard))
	for n := range q.Status.Hard {
		names = append(names, string(n))
	}
	sort.Strings(names)
	var req, lim []string
	for _, n := range names {
		used, hard := q.Status.Used[corev1.ResourceName(n)], q.Status.Hard[corev1.ResourceName(n)]
		s := fmt.Sprintf("%s: %s/%s", n, used.String(), hard.String())
		if pieces := strings.Split(n, "."); len(pieces) > 1 && pieces[0] == "limits" {
			lim = append(lim, s)
		} else {
			req = append(req, s)
		}
	}
	return []interface{}{strings.Join(req, ", "), strings.Join(lim, ", "), age(q)}
}

func limitRangeRules() rules {
	return rules{
		defaults: func(obj runtime.Object) {
			for i := range obj.(*corev1.LimitRange).Spec.Limits {
				defaultLimitRangeItem(&obj.(*corev1.LimitRange).Spec.Limits[i])
			}
		},
		validate: func(obj runtime.Object) field.ErrorList {
			var errs field.ErrorList
			for i, it := range obj.(*corev1.LimitRange).Spec.Limits {
				p := field.NewPath("spec", "limits").Index(i)
				errs = append(errs, oneOf(it.Type, p.Child("type"), corev1.LimitTypePod, corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim)...)
				for _, l := range []struct {
					name string
					rl   corev1.ResourceList
				}{{"max", it.Max}, {"min", it.Min}, {"default", it.Default}, {"defaultRequest", it.DefaultRequest}, {"maxLimitRequestRatio", it.MaxLimitRequestRatio}} {
					errs = append(errs, validateResourceList(l.rl, p.Child(l.name))...)
				}
				for k, mn := range it.Min {
					if mx, ok := it.Max[k]; ok && mn.Cmp(mx) > 0 {
						errs = append(errs, field.Invalid(p.Child("min").Key(string(k)), mn.String(), fmt.Sprintf("min value %s is greater than max value %s", mn.String(), mx.String())))
					}
				}
			}
			return errs
		},
	}
}

// defaultLimitRangeItem is SetDefaults_LimitRangeItem.
func defaultLimitRangeItem(it *corev1.LimitRangeItem) {
	if it.Type != corev1.LimitTypeContainer {
		return
	}
	if it.Default == nil {
		it.Default = corev1.ResourceList{}
	}
	if it.DefaultRequest == nil {
		it.DefaultRequest = corev1.ResourceList{}
	}
	fill := func(dst, src corev1.ResourceList) {
		for k, v := range src {
			if _, ok := dst[k]; !ok {
				dst[k] = v.DeepCopy()
			}
		}
	}
	fill(it.Default, it.Max)
	fill(it.DefaultRequest, it.Default)
	fill(it.DefaultRequest, it.Min)
}

func endpointsRules() rules {
	return rules{
		defaults: func(obj runtime.Object) {
			ep := obj.(*corev1.Endpoints)
			for i := range ep.Subsets {
				for j := range ep.Subsets[i].Ports {
					if ep.Subsets[i].Ports[j].Protocol == "" {
						ep.Subsets[i].Ports[j].Protocol = corev1.ProtocolTCP
					}
				}
			}
		},
		validate: func(obj runtime.Object) field.ErrorList { return validateEndpoints(obj.(*corev1.Endpoints)) },
		columns:  []metav1.TableColumnDefinition{col("Endpoints", "string", 0, corev1.Endpoints{}.SwaggerDoc()["subsets"]), ageColumn()},
		row: func(obj runtime.Object) []interface{} {
			return []interface{}{formatEndpoints(obj.(*corev1.Endpoints)), age(obj)}
		},
	}
}

func validateEndpoints(ep *corev1.Endpoints) field.ErrorList {
	var errs field.ErrorList
	for i, ss := range ep.Subsets {
		sp := field.NewPath("subsets").Index(i)
		for _, list := range []struct {
			name  string
			addrs []corev1.EndpointAddress
		}{{"addresses", ss.Addresses}, {"notReadyAddresses", ss.NotReadyAddresses}} {
			for j, a := range list.addrs {
				if net.ParseIP(a.IP) == nil {
					errs = append(errs, field.Invalid(sp.Child(list.name).Index(j).Child("ip"), a.IP, "must be a valid IP address"))
				}
				if a.Hostname != "" {
					errs = append(errs, dns1123Label(a.Hostname, sp.Child(list.name).Index(j).Child("hostname"))...)
				}
			}
		}
		names := sets.New[string]()
		for j, port := range ss.Ports {
			pp := sp.Child("ports").Index(j)
			if len(ss.Ports) > 1 && port.Name == "" {
				errs = append(errs, field.Required(pp.Child("name"), ""))
			} else if port.Name != "" {
				errs = append(errs, dns1123Label(port.Name, pp.Child("name"))...)
				if names.Has(port.Name) {
					errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
				}
				names.Insert(port.Name)
			}
			errs = append(errs, validatePortNum(port.Port, pp.Child("port"))...)
			errs = append(errs, oneOf(port.Protocol, pp.Child("protocol"), corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP)...)
		}
	}
	return errs
}

// formatEndpoints ports the printer helper of the same name (at most 3 entries).
func formatEndpoints(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	count := 0
	add := func(s string) {
		if len(list) < max {
			list = append(list, s)
		}
	}
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(a.IP)
			}
			continue
		}
		for _, port := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(net.JoinHostPort(a.IP, strconv.Itoa(int(port.Port))))
			}
		}
	}
	ret := strings.Join(list, ",")
	if count > max {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	return ret
}
