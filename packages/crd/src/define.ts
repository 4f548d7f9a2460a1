import { defineResource, type KubeObject, type ResourceDescriptor } from "@reconcile/api";
import type { Static, TObject, TSchema } from "@sinclair/typebox";
import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
  CustomResourceDefinitionVersion,
  JSONSchemaProps as K8sJSONSchemaProps,
} from "kubernetes-types/apiextensions/v1.js";
import { type JSONSchemaProps, toStructuralSchema, type ValidationRule } from "./schema.js";

export type { CustomResourceDefinition, CustomResourceDefinitionVersion, CustomResourceColumnDefinition };

/** A printer column (`additionalPrinterColumns`): `kubectl get` shows it. */
export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description?: string;
  format?: string;
  /** 0 shows in `kubectl get`, higher only with `-o wide`. */
  priority?: number;
}

/** The `/scale` subresource: where the replicas and the selector are. */
export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** One version of the kind: its schema, columns and subresources. */
export interface VersionDefinition<Spec extends TSchema = TSchema, Status extends TSchema = TSchema> {
  /** `v1`, `v1beta1`. */
  name: string;
  spec: Spec;
  /** With a status schema the version serves the `/status` subresource. */
  status?: Status | undefined;
  /** CEL rules over the whole object (`x-kubernetes-validations` at the root). */
  validations?: ValidationRule[] | undefined;
  printerColumns?: PrinterColumn[] | undefined;
  scale?: ScaleSubresource | undefined;
  /** Default true. */
  served?: boolean | undefined;
  deprecated?: boolean | undefined;
  deprecationWarning?: string | undefined;
}

export interface CustomResourceOptions<Spec extends TSchema, Status extends TSchema> {
  group: string;
  kind: string;
  /** Default: the kind in lower case, made plural as kubebuilder does (`website` → `websites`, `policy` → `policies`). */
  plural?: string | undefined;
  singular?: string | undefined;
  listKind?: string | undefined;
  shortNames?: string[] | undefined;
  categories?: string[] | undefined;
  /** Default `Namespaced`. */
  scope?: "Namespaced" | "Cluster" | undefined;
  /** The storage version: the TypeScript type comes from its schema. */
  version: VersionDefinition<Spec, Status>;
  /** Other served versions (older ones, kept for clients that still use them). */
  otherVersions?: VersionDefinition[] | undefined;
  /**
   * How the API server converts between the versions: the CRD's
   * `spec.conversion`. Default: none given (`None`: only `apiVersion` changes).
   */
  conversion?: CustomResourceDefinition["spec"]["conversion"] | undefined;
}

/** The object type of a custom resource whose spec and status have these schemas. */
export type CustomObject<Spec extends TSchema, Status extends TSchema> = KubeObject & {
  apiVersion?: string;
  kind?: string;
  spec: Static<Spec>;
  status?: Static<Status>;
};

/** What {@link defineCustomResource} gives: the CRD, the typed descriptor, and the type through `CustomResourceOf`. */
export interface CustomResource<T extends KubeObject> {
  /** The CustomResourceDefinition, for `kubectl apply`, envtest's `crds` or a Helm chart. */
  readonly crd: CustomResourceDefinition;
  /** The storage version's descriptor: the client, informers, listers and the builder take it. */
  readonly resource: ResourceDescriptor<T>;
  /** The structural schema of the storage version (`openAPIV3Schema`). */
  readonly schema: JSONSchemaProps;
}

/** The object type of a custom resource: `type Website = CustomResourceOf<typeof websites>`. */
export type CustomResourceOf<R> = R extends CustomResource<infer T> ? T : never;

/**
 * Defines a custom kind once, in TypeScript: the schemas (built with `k`)
 * give the CustomResourceDefinition, the typed resource descriptor, and the
 * object type, so the type and the schema cannot drift. A schema a
 * Kubernetes API server would reject as non-structural throws here, naming
 * the field.
 */
export function defineCustomResource<
  Spec extends TObject,
  Status extends TSchema = TObject<Record<string, never>>,
>(options: CustomResourceOptions<Spec, Status>): CustomResource<CustomObject<Spec, Status>> {
  const singular = options.singular ?? options.kind.toLowerCase();
  const plural = options.plural ?? pluralize(singular);
  const scope = options.scope ?? "Namespaced";
  const storage = versionOf(options.version, true);
  const versions = [storage, ...(options.otherVersions ?? []).map((version) => versionOf(version, false))];
  const names = {
    kind: options.kind,
    listKind: options.listKind ?? `${options.kind}List`,
    plural,
    singular,
    ...(options.shortNames?.length ? { shortNames: options.shortNames } : {}),
    ...(options.categories?.length ? { categories: options.categories } : {}),
  };
  const crd: CustomResourceDefinition = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${options.group}` },
    spec: {
      group: options.group,
      names,
      scope,
      versions,
      ...(options.conversion === undefined ? {} : { conversion: options.conversion }),
    },
  };
  const resource = defineResource<CustomObject<Spec, Status>>({
    group: options.group,
    version: options.version.name,
    kind: options.kind,
    listKind: names.listKind,
    plural,
    singular,
    namespaced: scope === "Namespaced",
    shortNames: options.shortNames ?? [],
    categories: options.categories ?? [],
    subresources: [
      ...(options.version.status !== undefined ? (["status"] as const) : []),
      ...(options.version.scale !== undefined ? (["scale"] as const) : []),
    ],
  });
  return Object.freeze({
    crd,
    resource,
    schema: storage.schema?.openAPIV3Schema as JSONSchemaProps,
  });
}

function versionOf(version: VersionDefinition, storage: boolean): CustomResourceDefinitionVersion {
  const properties: Record<string, JSONSchemaProps> = { spec: toStructuralSchema(version.spec, "spec") };
  if (version.status !== undefined) properties.status = toStructuralSchema(version.status, "status");
  // The object type has a spec: so does every object the server accepts.
  const root: JSONSchemaProps = { type: "object", required: ["spec"], properties };
  if (version.validations?.length) root["x-kubernetes-validations"] = version.validations;
  const subresources: CustomResourceDefinitionVersion["subresources"] = {};
  if (version.status !== undefined) subresources.status = {};
  if (version.scale !== undefined) subresources.scale = version.scale;
  return {
    name: version.name,
    served: version.served ?? true,
    storage,
    ...(version.deprecated ? { deprecated: true } : {}),
    ...(version.deprecationWarning !== undefined ? { deprecationWarning: version.deprecationWarning } : {}),
    schema: { openAPIV3Schema: root as K8sJSONSchemaProps },
    ...(Object.keys(subresources).length > 0 ? { subresources } : {}),
    ...(version.printerColumns?.length ? { additionalPrinterColumns: version.printerColumns } : {}),
  };
}

/** kubebuilder's pluralization of a lower-case kind. */
export function pluralize(singular: string): string {
  if (/(s|x|z|ch|sh)$/.test(singular)) return `${singular}es`;
  if (/[^aeiou]y$/.test(singular)) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}
