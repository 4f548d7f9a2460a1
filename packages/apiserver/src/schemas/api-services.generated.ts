// The OpenAPI definitions and Go field types of kube-aggregator's apiregistration.k8s.io/v1
// APIService as Kubernetes 1.32 publishes them, transcribed from upstream's api/openapi-spec and
// k8s.io/kube-aggregator's apiregistration/v1 types (Apache-2.0, The Kubernetes Authors) beside the
// generated tables, which hold kube-apiserver's own kinds only. Written out by a script from those
// documents; descriptions are upstream's, for `kubectl explain`.

/** group/version/Kind → the name of its definition. */
export const kindDefinitionNames: Readonly<Record<string, string>> = {
  "apiregistration.k8s.io/v1/APIService": "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService",
  "apiregistration.k8s.io/v1/APIServiceList":
    "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceList",
};

/** The definitions, in OpenAPI v2's form (`#/definitions/` references). */
export const definitions: Readonly<Record<string, unknown>> = {
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService": {
    description:
      'APIService represents a server for a particular GroupVersion. Name must be "version.group".',
    properties: {
      apiVersion: {
        description:
          "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
        type: "string",
      },
      kind: {
        description:
          "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
        type: "string",
      },
      metadata: {
        $ref: "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        description:
          "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
      },
      spec: {
        $ref: "#/definitions/io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceSpec",
        description: "Spec contains information for locating and communicating with a server",
      },
      status: {
        $ref: "#/definitions/io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus",
        description: "Status contains derived information about an API server",
      },
    },
    type: "object",
    "x-kubernetes-group-version-kind": [
      {
        group: "apiregistration.k8s.io",
        kind: "APIService",
        version: "v1",
      },
    ],
  },
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceCondition": {
    description: "APIServiceCondition describes the state of an APIService at a particular point",
    properties: {
      lastTransitionTime: {
        $ref: "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time",
        description: "Last time the condition transitioned from one status to another.",
      },
      message: {
        description: "Human-readable message indicating details about last transition.",
        type: "string",
      },
      reason: {
        description: "Unique, one-word, CamelCase reason for the condition's last transition.",
        type: "string",
      },
      status: {
        description: "Status is the status of the condition. Can be True, False, Unknown.",
        type: "string",
      },
      type: {
        description: "Type is the type of the condition.",
        type: "string",
      },
    },
    required: ["type", "status"],
    type: "object",
  },
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceList": {
    description: "APIServiceList is a list of APIService objects.",
    properties: {
      apiVersion: {
        description:
          "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
        type: "string",
      },
      items: {
        description: "Items is the list of APIService",
        items: {
          $ref: "#/definitions/io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService",
        },
        type: "array",
      },
      kind: {
        description:
          "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
        type: "string",
      },
      metadata: {
        $ref: "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
        description:
          "Standard list metadata More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
      },
    },
    required: ["items"],
    type: "object",
    "x-kubernetes-group-version-kind": [
      {
        group: "apiregistration.k8s.io",
        kind: "APIServiceList",
        version: "v1",
      },
    ],
  },
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceSpec": {
    description:
      "APIServiceSpec contains information for locating and communicating with a server. Only https is supported, though you are able to disable certificate verification.",
    properties: {
      caBundle: {
        description:
          "CABundle is a PEM encoded CA bundle which will be used to validate an API server's serving certificate. If unspecified, system trust roots on the apiserver are used.",
        format: "byte",
        type: "string",
        "x-kubernetes-list-type": "atomic",
      },
      group: {
        description: "Group is the API group name this server hosts",
        type: "string",
      },
      groupPriorityMinimum: {
        description:
          "GroupPriorityMinimum is the priority this group should have at least. Higher priority means that the group is preferred by clients over lower priority ones. Note that other versions of this group might specify even higher GroupPriorityMinimum values such that the whole group gets a higher priority. The primary sort is based on GroupPriorityMinimum, ordered highest number to lowest (20 before 10). The secondary sort is based on the alphabetical comparison of the name of the object.  (v1.bar before v1.foo) We'd recommend something like: *.k8s.io (except extensions) at 18000 and PaaSes (OpenShift, Deis) are recommended to be in the 2000s",
        format: "int32",
        type: "integer",
      },
      insecureSkipTLSVerify: {
        description:
          "InsecureSkipTLSVerify disables TLS certificate verification when communicating with this server. This is strongly discouraged.  You should use the CABundle instead.",
        type: "boolean",
      },
      service: {
        $ref: "#/definitions/io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.ServiceReference",
        description:
          "Service is a reference to the service for this API server.  It must communicate on port 443. If the Service is nil, that means the handling for the API groupversion is handled locally on this server. The call will simply delegate to the normal handler chain to be fulfilled.",
      },
      version: {
        description: 'Version is the API version this server hosts.  For example, "v1"',
        type: "string",
      },
      versionPriority: {
        description:
          'VersionPriority controls the ordering of this API version inside of its group.  Must be greater than zero. The primary sort is based on VersionPriority, ordered highest to lowest (20 before 10). Since it\'s inside of a group, the number can be small, probably in the 10s. In case of equal version priorities, the version string will be used to compute the order inside a group. If the version string is "kube-like", it will sort above non "kube-like" version strings, which are ordered lexicographically. "Kube-like" versions start with a "v", then are followed by a number (the major version), then optionally the string "alpha" or "beta" and another number (the minor version). These are sorted first by GA > beta > alpha (where GA is a version with no suffix such as beta or alpha), and then by comparing major version, then minor version. An example sorted list of versions: v10, v2, v1, v11beta2, v10beta3, v3beta1, v12alpha1, v11alpha2, foo1, foo10.',
        format: "int32",
        type: "integer",
      },
    },
    required: ["groupPriorityMinimum", "versionPriority"],
    type: "object",
  },
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus": {
    description: "APIServiceStatus contains derived information about an API server",
    properties: {
      conditions: {
        description: "Current service state of apiService.",
        items: {
          $ref: "#/definitions/io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceCondition",
        },
        type: "array",
        "x-kubernetes-list-map-keys": ["type"],
        "x-kubernetes-list-type": "map",
        "x-kubernetes-patch-merge-key": "type",
        "x-kubernetes-patch-strategy": "merge",
      },
    },
    type: "object",
  },
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.ServiceReference": {
    description: "ServiceReference holds a reference to Service.legacy.k8s.io",
    properties: {
      name: {
        description: "Name is the name of the service",
        type: "string",
      },
      namespace: {
        description: "Namespace is the namespace of the service",
        type: "string",
      },
      port: {
        description:
          "If specified, the port on the service that hosting webhook. Default to 443 for backward compatibility. `port` should be a valid port number (1-65535, inclusive).",
        format: "int32",
        type: "integer",
      },
    },
    type: "object",
  },
};

/** Definition name → JSON field → the field's Go type, as reflect prints it. */
export const goFieldTypes: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService": {
    metadata: "v1.ObjectMeta",
    spec: "v1.APIServiceSpec",
    status: "v1.APIServiceStatus",
  },
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceCondition": {
    lastTransitionTime: "v1.Time",
    message: "string",
    reason: "string",
    status: "v1.ConditionStatus",
    type: "v1.APIServiceConditionType",
  },
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceList": {
    items: "[]v1.APIService",
    metadata: "v1.ListMeta",
  },
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceSpec": {
    caBundle: "[]byte",
    group: "string",
    groupPriorityMinimum: "int32",
    insecureSkipTLSVerify: "bool",
    service: "*v1.ServiceReference",
    version: "string",
    versionPriority: "int32",
  },
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus": {
    conditions: "[]v1.APIServiceCondition",
  },
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.ServiceReference": {
    name: "string",
    namespace: "string",
    port: "*int32",
  },
};

/** Named Go type → its underlying type. */
export const goNamedTypes: Readonly<Record<string, string>> = {
  "v1.APIServiceConditionType": "string",
};

/** Definition name → JSON field → what Go's encoding/json writes when the field is unset. */
export const goEmptyValues: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService": {
    metadata: "#io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    spec: "#io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceSpec",
    status: "#io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus",
  },
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceCondition": {
    lastTransitionTime: "null",
    status: '""',
    type: '""',
  },
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceList": {
    items: "null",
    metadata: "#io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
  },
  "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceSpec": {
    groupPriorityMinimum: "0",
    versionPriority: "0",
  },
};
