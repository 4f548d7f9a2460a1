// The OpenAPI definitions and Go field types of storage.k8s.io/v1's CSI kinds (CSIDriver, CSINode,
// CSIStorageCapacity, VolumeAttachment) as Kubernetes 1.32 publishes them, transcribed from upstream's
// api/openapi-spec and k8s.io/api/storage/v1 (Apache-2.0, The Kubernetes Authors) beside the generated
// tables, which do not hold them. Descriptions are upstream's, for `kubectl explain`.

/** group/version/Kind → the name of its definition. */
export const kindDefinitionNames: Readonly<Record<string, string>> = {
  "storage.k8s.io/v1/CSIDriver": "io.k8s.api.storage.v1.CSIDriver",
  "storage.k8s.io/v1/CSIDriverList": "io.k8s.api.storage.v1.CSIDriverList",
  "storage.k8s.io/v1/CSINode": "io.k8s.api.storage.v1.CSINode",
  "storage.k8s.io/v1/CSINodeList": "io.k8s.api.storage.v1.CSINodeList",
  "storage.k8s.io/v1/CSIStorageCapacity": "io.k8s.api.storage.v1.CSIStorageCapacity",
  "storage.k8s.io/v1/CSIStorageCapacityList": "io.k8s.api.storage.v1.CSIStorageCapacityList",
  "storage.k8s.io/v1/VolumeAttachment": "io.k8s.api.storage.v1.VolumeAttachment",
  "storage.k8s.io/v1/VolumeAttachmentList": "io.k8s.api.storage.v1.VolumeAttachmentList",
};

/** The definitions, in OpenAPI v2's form (`#/definitions/` references). */
export const definitions: Readonly<Record<string, unknown>> = {
  "io.k8s.api.storage.v1.CSIDriver": {
    description:
      "CSIDriver captures information about a Container Storage Interface (CSI) volume driver deployed on the cluster. Kubernetes attach detach controller uses this object to determine whether attach is required. Kubelet uses this object to determine whether pod information needs to be passed on mount. CSIDriver objects are non-namespaced.",
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
          "Standard object metadata. metadata.Name indicates the name of the CSI driver that this object refers to; it MUST be the same name returned by the CSI GetPluginName() call for that driver. The driver name must be 63 characters or less, beginning and ending with an alphanumeric character ([a-z0-9A-Z]) with dashes (-), dots (.), and alphanumerics between. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
      },
      spec: {
        $ref: "#/definitions/io.k8s.api.storage.v1.CSIDriverSpec",
        description: "spec represents the specification of the CSI Driver.",
      },
    },
    required: ["spec"],
    type: "object",
    "x-kubernetes-group-version-kind": [
      {
        group: "storage.k8s.io",
        kind: "CSIDriver",
        version: "v1",
      },
    ],
  },
  "io.k8s.api.storage.v1.CSIDriverList": {
    description: "CSIDriverList is a collection of CSIDriver objects.",
    properties: {
      apiVersion: {
        description:
          "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
        type: "string",
      },
      items: {
        description: "items is the list of CSIDriver",
        items: {
          $ref: "#/definitions/io.k8s.api.storage.v1.CSIDriver",
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
        group: "storage.k8s.io",
        kind: "CSIDriverList",
        version: "v1",
      },
    ],
  },
  "io.k8s.api.storage.v1.CSIDriverSpec": {
    description: "CSIDriverSpec is the specification of a CSIDriver.",
    properties: {
      attachRequired: {
        description:
          "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the CSIDriverRegistry feature gate is enabled and the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.",
        type: "boolean",
      },
      fsGroupPolicy: {
        description:
          "fsGroupPolicy defines if the underlying volume supports changing ownership and permission of the volume before being mounted. Refer to the specific FSGroupPolicy values for additional details.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.\n\nDefaults to ReadWriteOnceWithFSType, which will examine each volume to determine if Kubernetes should modify ownership and permissions of the volume. With the default policy the defined fsGroup will only be applied if a fstype is defined and the volume's access mode contains ReadWriteOnce.",
        type: "string",
      },
      podInfoOnMount: {
        description:
          'podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. "csi.storage.k8s.io/pod.name": pod.Name "csi.storage.k8s.io/pod.namespace": pod.Namespace "csi.storage.k8s.io/pod.uid": string(pod.UID) "csi.storage.k8s.io/ephemeral": "true" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise "false"\n\n"csi.storage.k8s.io/ephemeral" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the "Persistent" and "Ephemeral" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn\'t support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.',
        type: "boolean",
      },
      requiresRepublish: {
        description:
          "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.",
        type: "boolean",
      },
      seLinuxMount: {
        description:
          'seLinuxMount specifies if the CSI driver supports "-o context" mount option.\n\nWhen "true", the CSI driver must ensure that all volumes provided by this CSI driver can be mounted separately with different `-o context` options. This is typical for storage backends that provide volumes as filesystems on block devices or as independent shared volumes. Kubernetes will call NodeStage / NodePublish with "-o context=xyz" mount option when mounting a ReadWriteOncePod volume used in Pod that has explicitly set SELinux context. In the future, it may be expanded to other volume AccessModes. In any case, Kubernetes will ensure that the volume is mounted only with a single SELinux context.\n\nWhen "false", Kubernetes won\'t pass any special SELinux mount options to the driver. This is typical for volumes that represent subdirectories of a bigger shared filesystem.\n\nDefault is "false".',
        type: "boolean",
      },
      storageCapacity: {
        description:
          "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.",
        type: "boolean",
      },
      tokenRequests: {
        description:
          'tokenRequests indicates the CSI driver needs pods\' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: "csi.storage.k8s.io/serviceAccount.tokens": {\n  "<audience>": {\n    "token": <token>,\n    "expirationTimestamp": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.',
        items: {
          $ref: "#/definitions/io.k8s.api.storage.v1.TokenRequest",
        },
        type: "array",
        "x-kubernetes-list-type": "atomic",
      },
      volumeLifecycleModes: {
        description:
          'volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is "Persistent", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is "Ephemeral". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.',
        items: {
          type: "string",
        },
        type: "array",
        "x-kubernetes-list-type": "set",
      },
    },
    type: "object",
  },
  "io.k8s.api.storage.v1.CSINode": {
    description:
      "CSINode holds information about all CSI drivers installed on a node. CSI drivers do not need to create the CSINode object directly. As long as they use the node-driver-registrar sidecar container, the kubelet will automatically populate the CSINode object for the CSI driver as part of kubelet plugin registration. CSINode has the same name as a node. If the object is missing, it means either there are no CSI Drivers available on the node, or the Kubelet version is low enough that it doesn't create this object. CSINode has an OwnerReference that points to the corresponding node object.",
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
        description: "Standard object's metadata. metadata.name must be the Kubernetes node name.",
      },
      spec: {
        $ref: "#/definitions/io.k8s.api.storage.v1.CSINodeSpec",
        description: "spec is the specification of CSINode",
      },
    },
    required: ["spec"],
    type: "object",
    "x-kubernetes-group-version-kind": [
      {
        group: "storage.k8s.io",
        kind: "CSINode",
        version: "v1",
      },
    ],
  },
  "io.k8s.api.storage.v1.CSINodeDriver": {
    description:
      "CSINodeDriver holds information about the specification of one CSI driver installed on a node",
    properties: {
      allocatable: {
        $ref: "#/definitions/io.k8s.api.storage.v1.VolumeNodeResources",
        description:
          "allocatable represents the volume resources of a node that are available for scheduling. This field is beta.",
      },
      name: {
        description:
          "name represents the name of the CSI driver that this object refers to. This MUST be the same name returned by the CSI GetPluginName() call for that driver.",
        type: "string",
      },
      nodeID: {
        description:
          'nodeID of the node from the driver point of view. This field enables Kubernetes to communicate with storage systems that do not share the same nomenclature for nodes. For example, Kubernetes may refer to a given node as "node1", but the storage system may refer to the same node as "nodeA". When Kubernetes issues a command to the storage system to attach a volume to a specific node, it can use this field to refer to the node name using the ID that the storage system will understand, e.g. "nodeA" instead of "node1". This field is required.',
        type: "string",
      },
      topologyKeys: {
        description:
          'topologyKeys is the list of keys supported by the driver. When a driver is initialized on a cluster, it provides a set of topology keys that it understands (e.g. "company.com/zone", "company.com/region"). When a driver is initialized on a node, it provides the same topology keys along with values. Kubelet will expose these topology keys as labels on its own node object. When Kubernetes does topology aware provisioning, it can use this list to determine which labels it should retrieve from the node object and pass back to the driver. It is possible for different nodes to use different topology keys. This can be empty if driver does not support topology.',
        items: {
          type: "string",
        },
        type: "array",
        "x-kubernetes-list-type": "atomic",
      },
    },
    required: ["name", "nodeID"],
    type: "object",
  },
  "io.k8s.api.storage.v1.CSINodeList": {
    description: "CSINodeList is a collection of CSINode objects.",
    properties: {
      apiVersion: {
        description:
          "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
        type: "string",
      },
      items: {
        description: "items is the list of CSINode",
        items: {
          $ref: "#/definitions/io.k8s.api.storage.v1.CSINode",
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
        group: "storage.k8s.io",
        kind: "CSINodeList",
        version: "v1",
      },
    ],
  },
  "io.k8s.api.storage.v1.CSINodeSpec": {
    description:
      "CSINodeSpec holds information about the specification of all CSI drivers installed on a node",
    properties: {
      drivers: {
        description:
          "drivers is a list of information of all CSI Drivers existing on a node. If all drivers in the list are uninstalled, this can become empty.",
        items: {
          $ref: "#/definitions/io.k8s.api.storage.v1.CSINodeDriver",
        },
        type: "array",
        "x-kubernetes-list-map-keys": ["name"],
        "x-kubernetes-list-type": "map",
        "x-kubernetes-patch-merge-key": "name",
        "x-kubernetes-patch-strategy": "merge",
      },
    },
    required: ["drivers"],
    type: "object",
  },
  "io.k8s.api.storage.v1.CSIStorageCapacity": {
    description:
      'CSIStorageCapacity stores the result of one CSI GetCapacity call. For a given StorageClass, this describes the available capacity in a particular topology segment.  This can be used when considering where to instantiate new PersistentVolumes.\n\nFor example this can express things like: - StorageClass "standard" has "1234 GiB" available in "topology.kubernetes.io/zone=us-east1" - StorageClass "localssd" has "10 GiB" available in "kubernetes.io/hostname=knode-abc123"\n\nThe following three cases all imply that no capacity is available for a certain combination: - no object exists with suitable topology and storage class name - such an object exists, but the capacity is unset - such an object exists, but the capacity is zero\n\nThe producer of these objects can decide which approach is more suitable.\n\nThey are consumed by the kube-scheduler when a CSI driver opts into capacity-aware scheduling with CSIDriverSpec.StorageCapacity. The scheduler compares the MaximumVolumeSize against the requested size of pending volumes to filter out unsuitable nodes. If MaximumVolumeSize is unset, it falls back to a comparison against the less precise Capacity. If that is also unset, the scheduler assumes that capacity is insufficient and tries some other node.',
    properties: {
      apiVersion: {
        description:
          "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
        type: "string",
      },
      capacity: {
        $ref: "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity",
        description:
          "capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields.\n\nThe semantic is currently (CSI spec 1.2) defined as: The available capacity, in bytes, of the storage that can be used to provision volumes. If not set, that information is currently unavailable.",
      },
      kind: {
        description:
          "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
        type: "string",
      },
      maximumVolumeSize: {
        $ref: "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity",
        description:
          "maximumVolumeSize is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields.\n\nThis is defined since CSI spec 1.4.0 as the largest size that may be used in a CreateVolumeRequest.capacity_range.required_bytes field to create a volume with the same parameters as those in GetCapacityRequest. The corresponding value in the Kubernetes API is ResourceRequirements.Requests in a volume claim.",
      },
      metadata: {
        $ref: "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        description:
          "Standard object's metadata. The name has no particular meaning. It must be a DNS subdomain (dots allowed, 253 characters). To ensure that there are no conflicts with other CSI drivers on the cluster, the recommendation is to use csisc-<uuid>, a generated name, or a reverse-domain name which ends with the unique CSI driver name.\n\nObjects are namespaced.\n\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
      },
      nodeTopology: {
        $ref: "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
        description:
          "nodeTopology defines which nodes have access to the storage for which capacity was reported. If not set, the storage is not accessible from any node in the cluster. If empty, the storage is accessible from all nodes. This field is immutable.",
      },
      storageClassName: {
        description:
          "storageClassName represents the name of the StorageClass that the reported capacity applies to. It must meet the same requirements as the name of a StorageClass object (non-empty, DNS subdomain). If that object no longer exists, the CSIStorageCapacity object is obsolete and should be removed by its creator. This field is immutable.",
        type: "string",
      },
    },
    required: ["storageClassName"],
    type: "object",
    "x-kubernetes-group-version-kind": [
      {
        group: "storage.k8s.io",
        kind: "CSIStorageCapacity",
        version: "v1",
      },
    ],
  },
  "io.k8s.api.storage.v1.CSIStorageCapacityList": {
    description: "CSIStorageCapacityList is a collection of CSIStorageCapacity objects.",
    properties: {
      apiVersion: {
        description:
          "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
        type: "string",
      },
      items: {
        description: "items is the list of CSIStorageCapacity objects.",
        items: {
          $ref: "#/definitions/io.k8s.api.storage.v1.CSIStorageCapacity",
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
        group: "storage.k8s.io",
        kind: "CSIStorageCapacityList",
        version: "v1",
      },
    ],
  },
  "io.k8s.api.storage.v1.TokenRequest": {
    description: "TokenRequest contains parameters of a service account token.",
    properties: {
      audience: {
        description:
          'audience is the intended audience of the token in "TokenRequestSpec". It will default to the audiences of kube apiserver.',
        type: "string",
      },
      expirationSeconds: {
        description:
          'expirationSeconds is the duration of validity of the token in "TokenRequestSpec". It has the same default value of "ExpirationSeconds" in "TokenRequestSpec".',
        format: "int64",
        type: "integer",
      },
    },
    required: ["audience"],
    type: "object",
  },
  "io.k8s.api.storage.v1.VolumeAttachment": {
    description:
      "VolumeAttachment captures the intent to attach or detach the specified volume to/from the specified node.\n\nVolumeAttachment objects are non-namespaced.",
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
          "Standard object metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
      },
      spec: {
        $ref: "#/definitions/io.k8s.api.storage.v1.VolumeAttachmentSpec",
        description:
          "spec represents specification of the desired attach/detach volume behavior. Populated by the Kubernetes system.",
      },
      status: {
        $ref: "#/definitions/io.k8s.api.storage.v1.VolumeAttachmentStatus",
        description:
          "status represents status of the VolumeAttachment request. Populated by the entity completing the attach or detach operation, i.e. the external-attacher.",
      },
    },
    required: ["spec"],
    type: "object",
    "x-kubernetes-group-version-kind": [
      {
        group: "storage.k8s.io",
        kind: "VolumeAttachment",
        version: "v1",
      },
    ],
  },
  "io.k8s.api.storage.v1.VolumeAttachmentList": {
    description: "VolumeAttachmentList is a collection of VolumeAttachment objects.",
    properties: {
      apiVersion: {
        description:
          "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
        type: "string",
      },
      items: {
        description: "items is the list of VolumeAttachments",
        items: {
          $ref: "#/definitions/io.k8s.api.storage.v1.VolumeAttachment",
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
        group: "storage.k8s.io",
        kind: "VolumeAttachmentList",
        version: "v1",
      },
    ],
  },
  "io.k8s.api.storage.v1.VolumeAttachmentSource": {
    description:
      "VolumeAttachmentSource represents a volume that should be attached. Right now only PersistentVolumes can be attached via external attacher, in the future we may allow also inline volumes in pods. Exactly one member can be set.",
    properties: {
      inlineVolumeSpec: {
        $ref: "#/definitions/io.k8s.api.core.v1.PersistentVolumeSpec",
        description:
          "inlineVolumeSpec contains all the information necessary to attach a persistent volume defined by a pod's inline VolumeSource. This field is populated only for the CSIMigration feature. It contains translated fields from a pod's inline VolumeSource to a PersistentVolumeSpec. This field is beta-level and is only honored by servers that enabled the CSIMigration feature.",
      },
      persistentVolumeName: {
        description: "persistentVolumeName represents the name of the persistent volume to attach.",
        type: "string",
      },
    },
    type: "object",
  },
  "io.k8s.api.storage.v1.VolumeAttachmentSpec": {
    description: "VolumeAttachmentSpec is the specification of a VolumeAttachment request.",
    properties: {
      attacher: {
        description:
          "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().",
        type: "string",
      },
      nodeName: {
        description: "nodeName represents the node that the volume should be attached to.",
        type: "string",
      },
      source: {
        $ref: "#/definitions/io.k8s.api.storage.v1.VolumeAttachmentSource",
        description: "source represents the volume that should be attached.",
      },
    },
    required: ["attacher", "source", "nodeName"],
    type: "object",
  },
  "io.k8s.api.storage.v1.VolumeAttachmentStatus": {
    description: "VolumeAttachmentStatus is the status of a VolumeAttachment request.",
    properties: {
      attachError: {
        $ref: "#/definitions/io.k8s.api.storage.v1.VolumeError",
        description:
          "attachError represents the last error encountered during attach operation, if any. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.",
      },
      attached: {
        description:
          "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.",
        type: "boolean",
      },
      attachmentMetadata: {
        additionalProperties: {
          type: "string",
        },
        description:
          "attachmentMetadata is populated with any information returned by the attach operation, upon successful attach, that must be passed into subsequent WaitForAttach or Mount calls. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.",
        type: "object",
      },
      detachError: {
        $ref: "#/definitions/io.k8s.api.storage.v1.VolumeError",
        description:
          "detachError represents the last error encountered during detach operation, if any. This field must only be set by the entity completing the detach operation, i.e. the external-attacher.",
      },
    },
    required: ["attached"],
    type: "object",
  },
  "io.k8s.api.storage.v1.VolumeError": {
    description: "VolumeError captures an error encountered during a volume operation.",
    properties: {
      message: {
        description:
          "message represents the error encountered during Attach or Detach operation. This string may be logged, so it should not contain sensitive information.",
        type: "string",
      },
      time: {
        $ref: "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time",
        description: "time represents the time the error was encountered.",
      },
    },
    type: "object",
  },
  "io.k8s.api.storage.v1.VolumeNodeResources": {
    description: "VolumeNodeResources is a set of resource limits for scheduling of volumes.",
    properties: {
      count: {
        description:
          "count indicates the maximum number of unique volumes managed by the CSI driver that can be used on a node. A volume that is both attached and mounted on a node is considered to be used once, not twice. The same rule applies for a unique volume that is shared among multiple pods on the same node. If this field is not specified, then the supported number of volumes on this node is unbounded.",
        format: "int32",
        type: "integer",
      },
    },
    type: "object",
  },
};

/** Definition name → JSON field → the field's Go type, as reflect prints it. */
export const goFieldTypes: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "io.k8s.api.storage.v1.CSIDriver": {
    metadata: "v1.ObjectMeta",
    spec: "v1.CSIDriverSpec",
  },
  "io.k8s.api.storage.v1.CSIDriverList": {
    items: "[]v1.CSIDriver",
    metadata: "v1.ListMeta",
  },
  "io.k8s.api.storage.v1.CSIDriverSpec": {
    attachRequired: "*bool",
    fsGroupPolicy: "*v1.FSGroupPolicy",
    podInfoOnMount: "*bool",
    requiresRepublish: "*bool",
    seLinuxMount: "*bool",
    storageCapacity: "*bool",
    tokenRequests: "[]v1.TokenRequest",
    volumeLifecycleModes: "[]v1.VolumeLifecycleMode",
  },
  "io.k8s.api.storage.v1.CSINode": {
    metadata: "v1.ObjectMeta",
    spec: "v1.CSINodeSpec",
  },
  "io.k8s.api.storage.v1.CSINodeDriver": {
    allocatable: "*v1.VolumeNodeResources",
    name: "string",
    nodeID: "string",
    topologyKeys: "[]string",
  },
  "io.k8s.api.storage.v1.CSINodeList": {
    items: "[]v1.CSINode",
    metadata: "v1.ListMeta",
  },
  "io.k8s.api.storage.v1.CSINodeSpec": {
    drivers: "[]v1.CSINodeDriver",
  },
  "io.k8s.api.storage.v1.CSIStorageCapacity": {
    capacity: "*resource.Quantity",
    maximumVolumeSize: "*resource.Quantity",
    metadata: "v1.ObjectMeta",
    nodeTopology: "*v1.LabelSelector",
    storageClassName: "string",
  },
  "io.k8s.api.storage.v1.CSIStorageCapacityList": {
    items: "[]v1.CSIStorageCapacity",
    metadata: "v1.ListMeta",
  },
  "io.k8s.api.storage.v1.TokenRequest": {
    audience: "string",
    expirationSeconds: "*int64",
  },
  "io.k8s.api.storage.v1.VolumeAttachment": {
    metadata: "v1.ObjectMeta",
    spec: "v1.VolumeAttachmentSpec",
    status: "v1.VolumeAttachmentStatus",
  },
  "io.k8s.api.storage.v1.VolumeAttachmentList": {
    items: "[]v1.VolumeAttachment",
    metadata: "v1.ListMeta",
  },
  "io.k8s.api.storage.v1.VolumeAttachmentSource": {
    inlineVolumeSpec: "*v1.PersistentVolumeSpec",
    persistentVolumeName: "*string",
  },
  "io.k8s.api.storage.v1.VolumeAttachmentSpec": {
    attacher: "string",
    nodeName: "string",
    source: "v1.VolumeAttachmentSource",
  },
  "io.k8s.api.storage.v1.VolumeAttachmentStatus": {
    attachError: "*v1.VolumeError",
    attached: "bool",
    attachmentMetadata: "map[string]string",
    detachError: "*v1.VolumeError",
  },
  "io.k8s.api.storage.v1.VolumeError": {
    message: "string",
    time: "v1.Time",
  },
  "io.k8s.api.storage.v1.VolumeNodeResources": {
    count: "*int32",
  },
};

/** Named Go type → its underlying type. */
export const goNamedTypes: Readonly<Record<string, string>> = {
  "v1.FSGroupPolicy": "string",
  "v1.VolumeLifecycleMode": "string",
};

/** Definition name → JSON field → what Go's encoding/json writes when the field is unset. */
export const goEmptyValues: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "io.k8s.api.storage.v1.CSIDriver": {
    metadata: "#io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    spec: "#io.k8s.api.storage.v1.CSIDriverSpec",
  },
  "io.k8s.api.storage.v1.CSIDriverList": {
    items: "null",
    metadata: "#io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
  },
  "io.k8s.api.storage.v1.CSINode": {
    metadata: "#io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    spec: "#io.k8s.api.storage.v1.CSINodeSpec",
  },
  "io.k8s.api.storage.v1.CSINodeDriver": {
    name: '""',
    nodeID: '""',
    topologyKeys: "null",
  },
  "io.k8s.api.storage.v1.CSINodeList": {
    items: "null",
    metadata: "#io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
  },
  "io.k8s.api.storage.v1.CSINodeSpec": {
    drivers: "null",
  },
  "io.k8s.api.storage.v1.CSIStorageCapacity": {
    metadata: "#io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    storageClassName: '""',
  },
  "io.k8s.api.storage.v1.CSIStorageCapacityList": {
    items: "null",
    metadata: "#io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
  },
  "io.k8s.api.storage.v1.TokenRequest": {
    audience: '""',
  },
  "io.k8s.api.storage.v1.VolumeAttachment": {
    metadata: "#io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    spec: "#io.k8s.api.storage.v1.VolumeAttachmentSpec",
    status: "#io.k8s.api.storage.v1.VolumeAttachmentStatus",
  },
  "io.k8s.api.storage.v1.VolumeAttachmentList": {
    items: "null",
    metadata: "#io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
  },
  "io.k8s.api.storage.v1.VolumeAttachmentSpec": {
    attacher: '""',
    nodeName: '""',
    source: "#io.k8s.api.storage.v1.VolumeAttachmentSource",
  },
  "io.k8s.api.storage.v1.VolumeAttachmentStatus": {
    attached: "false",
  },
  "io.k8s.api.storage.v1.VolumeError": {
    time: "null",
  },
};
