/**
 * The shape of the fields the server reads, for the "decode" step: a value of
 * the wrong type is rejected with 400 BadRequest naming the field, as
 * kube-apiserver rejects a body its JSON decoder cannot read. Fields not
 * listed are kept as they are; `null` counts as absent, as in Go.
 */
export type Schema =
  | "string"
  | "integer"
  | "int32"
  | "boolean"
  | "any"
  | "intOrString"
  | { readonly map: Schema }
  | { readonly array: Schema }
  | { readonly fields: Readonly<Record<string, Schema>> };

/** The first type problem in `value`, as "path: expected X, got Y", or undefined. */
export function typeProblem(value: unknown, schema: Schema, path: string): string | undefined {
  if (value === null || value === undefined || schema === "any") return undefined;
  if (typeof schema === "string") {
    const ok =
      schema === "string"
        ? typeof value === "string"
        : schema === "integer"
          ? Number.isSafeInteger(value)
          : schema === "int32"
            ? Number.isInteger(value) && (value as number) >= -2147483648 && (value as number) <= 2147483647
            : schema === "boolean"
              ? typeof value === "boolean"
              : typeof value === "string" || Number.isInteger(value);
    const expected = schema === "intOrString" ? "integer or string" : schema;
    return ok ? undefined : `${path || "<root>"}: expected ${expected}, got ${describe(value)}`;
  }
  if ("array" in schema) {
    if (!Array.isArray(value)) return `${path}: expected array, got ${describe(value)}`;
    for (let i = 0; i < value.length; i++) {
      // A null element is no absent field: the code below would read it as an object or a string.
      if (value[i] === null && schema.array !== "any")
        return `${path}[${i}]: expected ${elementName(schema.array)}, got null`;
      const problem = typeProblem(value[i], schema.array, `${path}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (typeof value !== "object" || Array.isArray(value))
    return `${path || "<root>"}: expected object, got ${describe(value)}`;
  const record = value as Record<string, unknown>;
  if ("map" in schema) {
    for (const key of Object.keys(record)) {
      const problem = typeProblem(record[key], schema.map, `${path}[${JSON.stringify(key)}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  for (const [name, fieldSchema] of Object.entries(schema.fields)) {
    const problem = typeProblem(record[name], fieldSchema, path ? `${path}.${name}` : name);
    if (problem) return problem;
  }
  return undefined;
}

function elementName(schema: Schema): string {
  if (typeof schema === "string") return schema === "intOrString" ? "integer or string" : schema;
  return "array" in schema ? "array" : "object";
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (typeof value === "number" && !Number.isSafeInteger(value)) return `number ${value}`;
  if (typeof value === "number" && (value < -2147483648 || value > 2147483647)) return `number ${value}`;
  return typeof value === "string" ? `string ${JSON.stringify(value).slice(0, 60)}` : typeof value;
}

const stringMap: Schema = { map: "string" };
const strings: Schema = { array: "string" };

export const objectMetaSchema: Schema = {
  fields: {
    name: "string",
    generateName: "string",
    namespace: "string",
    uid: "string",
    resourceVersion: "string",
    generation: "integer",
    creationTimestamp: "string",
    deletionTimestamp: "string",
    deletionGracePeriodSeconds: "integer",
    labels: stringMap,
    annotations: stringMap,
    finalizers: strings,
    ownerReferences: {
      array: {
        fields: {
          apiVersion: "string",
          kind: "string",
          name: "string",
          uid: "string",
          controller: "boolean",
          blockOwnerDeletion: "boolean",
        },
      },
    },
    managedFields: { array: "any" },
  },
};

const labelSelectorSchema: Schema = {
  fields: {
    matchLabels: stringMap,
    matchExpressions: { array: { fields: { key: "string", operator: "string", values: strings } } },
  },
};

const containerSchema: Schema = {
  fields: {
    name: "string",
    image: "string",
    command: strings,
    args: strings,
    workingDir: "string",
    imagePullPolicy: "string",
    ports: {
      array: {
        fields: {
          name: "string",
          containerPort: "int32",
          hostPort: "int32",
          protocol: "string",
          hostIP: "string",
        },
      },
    },
    env: { array: { fields: { name: "string", value: "string", valueFrom: "any" } } },
    resources: { fields: { limits: { map: "intOrString" }, requests: { map: "intOrString" } } },
    volumeMounts: { array: { fields: { name: "string", mountPath: "string", readOnly: "boolean" } } },
    terminationMessagePath: "string",
    terminationMessagePolicy: "string",
  },
};

export const podSpecSchema: Schema = {
  fields: {
    containers: { array: containerSchema },
    initContainers: { array: containerSchema },
    volumes: { array: { fields: { name: "string" } } },
    restartPolicy: "string",
    terminationGracePeriodSeconds: "integer",
    activeDeadlineSeconds: "integer",
    dnsPolicy: "string",
    nodeName: "string",
    nodeSelector: stringMap,
    serviceAccountName: "string",
    schedulerName: "string",
    hostname: "string",
    priority: "int32",
    tolerations: {
      array: {
        fields: {
          key: "string",
          operator: "string",
          value: "string",
          effect: "string",
          tolerationSeconds: "integer",
        },
      },
    },
  },
};

const podTemplateSchema: Schema = { fields: { metadata: objectMetaSchema, spec: podSpecSchema } };

export const podSchema: Schema = {
  fields: {
    spec: podSpecSchema,
    status: {
      fields: {
        phase: "string",
        conditions: { array: { fields: { type: "string", status: "string" } } },
        podIP: "string",
        hostIP: "string",
      },
    },
  },
};

export const deploymentSchema: Schema = {
  fields: {
    spec: {
      fields: {
        replicas: "int32",
        selector: labelSelectorSchema,
        template: podTemplateSchema,
        strategy: {
          fields: {
            type: "string",
            rollingUpdate: { fields: { maxSurge: "intOrString", maxUnavailable: "intOrString" } },
          },
        },
        minReadySeconds: "int32",
        revisionHistoryLimit: "int32",
        paused: "boolean",
        progressDeadlineSeconds: "int32",
      },
    },
    status: {
      fields: {
        observedGeneration: "integer",
        replicas: "int32",
        updatedReplicas: "int32",
        readyReplicas: "int32",
        availableReplicas: "int32",
        unavailableReplicas: "int32",
        collisionCount: "int32",
        conditions: { array: { fields: { type: "string", status: "string" } } },
      },
    },
  },
};

export const replicaSetSchema: Schema = {
  fields: {
    spec: {
      fields: {
        replicas: "int32",
        minReadySeconds: "int32",
        selector: labelSelectorSchema,
        template: podTemplateSchema,
      },
    },
    status: {
      fields: {
        replicas: "int32",
        fullyLabeledReplicas: "int32",
        readyReplicas: "int32",
        availableReplicas: "int32",
        observedGeneration: "integer",
        conditions: { array: { fields: { type: "string", status: "string" } } },
      },
    },
  },
};

export const leaseSchema: Schema = {
  fields: {
    spec: {
      fields: {
        holderIdentity: "string",
        leaseDurationSeconds: "int32",
        acquireTime: "string",
        renewTime: "string",
        leaseTransitions: "int32",
      },
    },
  },
};

export const eventSchema: Schema = {
  fields: {
    involvedObject: {
      fields: {
        kind: "string",
        namespace: "string",
        name: "string",
        uid: "string",
        apiVersion: "string",
        resourceVersion: "string",
        fieldPath: "string",
      },
    },
    reason: "string",
    message: "string",
    type: "string",
    count: "int32",
    firstTimestamp: "string",
    lastTimestamp: "string",
    source: { fields: { component: "string", host: "string" } },
  },
};

export const nodeSchema: Schema = {
  fields: { spec: { fields: { unschedulable: "boolean", podCIDR: "string", providerID: "string" } } },
};

export const namespaceSchema: Schema = { fields: { spec: { fields: { finalizers: strings } } } };

export const configMapSchema: Schema = {
  fields: { data: stringMap, binaryData: stringMap, immutable: "boolean" },
};

export const secretSchema: Schema = {
  fields: { data: stringMap, stringData: stringMap, type: "string", immutable: "boolean" },
};
