package registry

import (
	"encoding/json"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxDataSize is core.MaxSecretSize, the limit of a ConfigMap's or Secret's data.
const maxDataSize = 1 * 1024 * 1024

func configMapRules() rules {
	return rules{
		validate: func(obj runtime.Object) field.ErrorList { return validateConfigMap(obj.(*corev1.ConfigMap)) },
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap)
			errs := validateConfigMap(n)
			if o.Immutable != nil && *o.Immutable {
				errs = append(errs, immutableWhenSet(n.Immutable, "data", !reflect.DeepEqual(n.Data, o.Data))...)
				if !reflect.DeepEqual(n.BinaryData, o.BinaryData) {
					errs = append(errs, field.Forbidden(field.NewPath("binaryData"), "field is immutable when `immutable` is set"))
				}
			}
			return errs
		},
		columns: []metav1.TableColumnDefinition{col("Data", "string", 0, corev1.ConfigMap{}.SwaggerDoc()["data"]), ageColumn()},
		row: func(obj runtime.Object) []interface{} {
			cm := obj.(*corev1.ConfigMap)
			return []interface{}{int64(len(cm.Data) + len(cm.BinaryData)), age(cm)}
		},
	}
}

// immutableWhenSet reports the `immutable: true` violations of an update.
func immutableWhenSet(newImmutable *bool, dataField string, dataChanged bool) field.ErrorList {
	var errs field.ErrorList
	if newImmutable == nil || !*newImmutable {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
	}
	if dataChanged {
		errs = append(errs, field.Forbidden(field.NewPath(dataField), "field is immutable when `immutable` is set"))
	}
	return errs
}

func validateConfigMap(cm *corev1.ConfigMap) field.ErrorList {
	var errs field.ErrorList
	total := 0
	for k, v := range cm.Data {
		errs = append(errs, msgs(k, field.NewPath("data").Key(k), validation.IsConfigMapKey(k))...)
		if _, dup := cm.BinaryData[k]; dup {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, "duplicate of key present in binaryData"))
		}
		total += len(v)
	}
	for k, v := range cm.BinaryData {
		errs = append(errs, msgs(k, field.NewPath("binaryData").Key(k), validation.IsConfigMapKey(k))...)
		total += len(v)
	}
	if total > maxDataSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", maxDataSize))
	}
	return errs
}

func secretRules() rules {
	return rules{
		defaults: func(obj runtime.Object) { defaultSecret(obj.(*corev1.Secret)) },
		validate: func(obj runtime.Object) field.ErrorList { return validateSecret(obj.(*corev1.Secret)) },
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*corev1.Secret), old.(*corev1.Secret)
			errs := immutable(n.Type, o.Type, field.NewPath("type"))
			if o.Immutable != nil && *o.Immutable {
				errs = append(errs, immutableWhenSet(n.Immutable, "data", !reflect.DeepEqual(n.Data, o.Data))...)
			}
			return append(errs, validateSecret(n)...)
		},
		fields: func(obj runtime.Object, set fields.Set) { set["type"] = string(obj.(*corev1.Secret).Type) },
		columns: []metav1.TableColumnDefinition{
			col("Type", "string", 0, corev1.Secret{}.SwaggerDoc()["type"]),
			col("Data", "string", 0, corev1.Secret{}.SwaggerDoc()["data"]),
			ageColumn(),
		},
		row: func(obj runtime.Object) []interface{} {
			s := obj.(*corev1.Secret)
			return []interface{}{string(s.Type), int64(len(s.Data)), age(s)}
		},
	}
}

// defaultSecret sets type Opaque and folds stringData into data, as the
// v1 -> internal conversion of kube-apiserver does.
func defaultSecret(s *corev1.Secret) {
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
	}
	s.StringData = nil
}

func validateSecret(s *corev1.Secret) field.ErrorList {
	data := field.NewPath("data")
	var errs field.ErrorList
	total := 0
	for k, v := range s.Data {
		errs = append(errs, msgs(k, data.Key(k), validation.IsConfigMapKey(k))...)
		total += len(v)
	}
	if total > maxDataSize {
		errs = append(errs, field.TooLong(data, "", maxDataSize))
	}
	has := func(k string) bool { _, ok := s.Data[k]; return ok }
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg:
		errs = append(errs, requireJSONKey(s, corev1.DockerConfigKey)...)
	case corev1.SecretTypeDockerConfigJson:
		errs = append(errs, requireJSONKey(s, corev1.DockerConfigJsonKey)...)
	case corev1.SecretTypeBasicAuth:
		if !has(corev1.BasicAuthUsernameKey) && !has(corev1.BasicAuthPasswordKey) {
			errs = append(errs, field.Required(data.Key(corev1.BasicAuthUsernameKey), ""),
				field.Required(data.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(data.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
			if !has(k) {
				errs = append(errs, field.Required(data.Key(k), ""))
			}
		}
	}
	return errs
}

func requireJSONKey(s *corev1.Secret, key string) field.ErrorList {
	p := field.NewPath("data").Key(key)
	b, ok := s.Data[key]
	if !ok {
		return field.ErrorList{field.Required(p, "")}
	}
	if err := json.Unmarshal(b, &map[string]interface{}{}); err != nil {
		return field.ErrorList{field.Invalid(p, "<secret contents redacted>", err.Error())}
	}
	return nil
}

func serviceAccountRules() rules {
	return rules{
		validate: func(obj runtime.Object) field.ErrorList {
			sa := obj.(*corev1.ServiceAccount)
			var errs field.ErrorList
			for i, s := range sa.ImagePullSecrets {
				if s.Name == "" {
					errs = append(errs, field.Required(field.NewPath("imagePullSecrets").Index(i).Child("name"), ""))
				}
			}
			return errs
		},
		columns: []metav1.TableColumnDefinition{ageColumn()},
		row:     func(obj runtime.Object) []interface{} { return []interface{}{age(obj)} },
	}
}
