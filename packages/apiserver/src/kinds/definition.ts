import type { KubeObject, ResourceDescriptor, SelectableFields } from "@reconcile/api";
import { builtinApplyType } from "../apply/builtin-types.js";
import type { TypeNode } from "../apply/schema.js";
import { builtinPatchMeta } from "../registry/builtin-patch-meta.js";
import { emptyValueFiller } from "../registry/empty-values.js";
import { dnsSubdomainName } from "../registry/meta-validation.js";
import { defaultPatchMeta, type PatchMeta } from "../registry/patch.js";
import type {
  ObjectSource,
  ResourceDefinition,
  VersionConversion,
  WriteHooks,
} from "../registry/resource-definition.js";
import { builtinDecoderSchema, type Schema } from "../registry/schema.js";
import type { Strategy } from "../registry/strategy.js";
import type { SubresourceHandler } from "../registry/subresource-handler.js";
import { builtinGoFieldTypes } from "../schemas/builtin-tables.js";
import { builtinKindSchema, type KindSchema } from "../schemas/kind-schema.js";
import { defaultPrinter, type Printer } from "./printers/index.js";
import { impliedSubresources } from "./subresources.js";

// The contract a definition meets lives in the registry; re-exported for the kinds that import it from here.
export type {
  ObjectSource,
  ResourceDefinition,
  WriteHookContext,
  WriteHooks,
} from "../registry/resource-definition.js";
export type {
  SubresourceDeleteOptions,
  SubresourceHandler,
  SubresourceStore,
  SubresourceWriteOptions,
} from "../registry/subresource-handler.js";

/** What {@link defineKind} needs: the descriptor; every other part has a default. */
export interface ResourceDefinitionInit<T extends KubeObject = KubeObject> {
  descriptor: ResourceDescriptor<T>;
  /** Default: names are DNS-1123 subdomains; nothing else is checked. */
  strategy?: Strategy | undefined;
  /** Default: derived from the kind's built-in OpenAPI schema; `"any"` (metadata is still checked) without one. */
  schema?: Schema | undefined;
  /** Default: only `metadata.name` (and `metadata.namespace` for namespaced kinds). */
  selectableFields?: SelectableFields | undefined;
  /** Default: Name and Created At, as kube-apiserver's default table. */
  printer?: Printer | undefined;
  /** Default: {@link resourceVerbs}, every verb a storage serves. */
  verbs?: readonly string[] | undefined;
  /** Default: none, so a protobuf body of this kind is refused with a 415-style 400 naming JSON. */
  protobufMessage?: string | undefined;
  /**
   * Default: derived from the kind's built-in OpenAPI schema; without one, the
   * built-in kinds' merge keys by field name (containers by name, conditions by
   * type, …). `null`: the kind takes no strategic merge patch (custom resources).
   */
  patchMeta?: PatchMeta | null | undefined;
  /**
   * Added to the `status` and `scale` handlers the descriptor's subresources
   * imply (scale where the strategy has scale rules); default: none beyond those.
   */
  subresources?: Readonly<Record<string, SubresourceHandler>> | undefined;
  /** Default: derived from the kind's built-in OpenAPI schema; ObjectMeta over a deduced body without one. */
  applyType?: TypeNode | undefined;
  /** Default: Kubernetes' own schema (1.32) of the descriptor's group, version and kind, if it defines one. */
  openAPI?: KindSchema | undefined;
  /** Default: false for the built-in kinds whose upstream (1.32) strategy sets no generation, true otherwise (custom kinds included). */
  tracksGeneration?: boolean | "from-first-change" | undefined;
  /** Default: `spec`. */
  generationFollows?: string | undefined;
  /** Default: true. */
  allowsUnconditionalUpdate?: boolean | undefined;
  /** Default: false. */
  allowsCreateOnUpdate?: boolean | undefined;
  /** Default: the descriptor's version. */
  storageVersion?: string | undefined;
  /** Default: none. */
  writeHooks?: WriteHooks | undefined;
  /** Default: none. */
  warning?: string | undefined;
  /** Default: objects are served as stored. */
  onRead?: ((object: KubeObject) => KubeObject) | undefined;
  /** Default: none, the objects are stored. */
  source?: ObjectSource | undefined;
  /** Default: the descriptor's own resource. */
  storedAs?: Pick<ResourceDescriptor, "group" | "plural"> | undefined;
  /** Default: only `apiVersion` differs between this version and `storageVersion`. */
  conversion?: VersionConversion | undefined;
}

/**
 * The built-in resources whose 1.32 strategies never set `metadata.generation`
 * (pods gain it only in 1.33), as `group/plural`.
 */
const untrackedGeneration: ReadonlySet<string> = new Set([
  "/pods",
  "/configmaps",
  "/secrets",
  "/namespaces",
  "/services",
  "/endpoints",
  "/events",
  "/nodes",
  "/serviceaccounts",
  "/persistentvolumes",
  "/persistentvolumeclaims",
  "/resourcequotas",
  "/limitranges",
  "events.k8s.io/events",
  "coordination.k8s.io/leases",
  "apps/controllerrevisions",
  "rbac.authorization.k8s.io/roles",
  "rbac.authorization.k8s.io/rolebindings",
  "rbac.authorization.k8s.io/clusterroles",
  "rbac.authorization.k8s.io/clusterrolebindings",
  "storage.k8s.io/storageclasses",
  "scheduling.k8s.io/priorityclasses",
]);

/** The verbs every served resource supports unless its definition says fewer. */
export const resourceVerbs: readonly string[] = [
  "create",
  "delete",
  "deletecollection",
  "get",
  "list",
  "patch",
  "update",
  "watch",
];

/** The strategy of a kind that declares none: name validation only. */
export const genericStrategy: Strategy = { nameRule: dnsSubdomainName };

/**
 * A definition with every part not given filled by its default. A built-in
 * kind's decoder schema, apply type and patch meta are derived from its
 * OpenAPI schema when first read, so a server that never patches a kind
 * never compiles its shapes.
 */
export function defineKind<T extends KubeObject>(init: ResourceDefinitionInit<T>): ResourceDefinition<T> {
  const { descriptor } = init;
  const strategy = init.strategy ?? genericStrategy;
  const builtin =
    "openAPI" in init ? undefined : builtinKindSchema(descriptor.group, descriptor.version, descriptor.kind);
  const derive = <V>(given: V | undefined, fromBuiltin: (name: string) => V, otherwise: V): (() => V) => {
    if (given !== undefined) return () => given;
    if (builtin === undefined) return () => otherwise;
    let value: V | undefined;
    return () => {
      value ??= fromBuiltin(builtin.name);
      return value;
    };
  };
  const schema = derive<Schema>(init.schema, builtinDecoderSchema, "any");
  const applyType = derive<TypeNode | undefined>(init.applyType, builtinApplyType, undefined);
  const fillEmpty = derive<ResourceDefinition["fillEmptyValues"]>(
    undefined,
    (name) => emptyValueFiller(name) as ResourceDefinition["fillEmptyValues"],
    undefined,
  );
  const rawFields = derive<readonly string[]>(
    undefined,
    (name) =>
      Object.entries(builtinGoFieldTypes[name] ?? {})
        .filter(([, goType]) => goType === "runtime.RawExtension")
        .map(([field]) => field),
    [],
  );
  const patchMeta = derive<PatchMeta | undefined>(
    init.patchMeta === null ? undefined : init.patchMeta,
    builtinPatchMeta,
    init.patchMeta === null ? undefined : defaultPatchMeta,
  );
  return Object.freeze({
    descriptor,
    strategy,
    get schema() {
      return schema();
    },
    selectableFields: init.selectableFields,
    printer: init.printer ?? defaultPrinter,
    verbs: init.verbs ?? resourceVerbs,
    protobufMessage: init.protobufMessage,
    get patchMeta() {
      return patchMeta();
    },
    subresources: { ...impliedSubresources(descriptor.subresources, strategy), ...init.subresources },
    get applyType() {
      return applyType();
    },
    openAPI: "openAPI" in init ? init.openAPI : builtin,
    tracksGeneration:
      init.tracksGeneration ?? !untrackedGeneration.has(`${descriptor.group}/${descriptor.plural}`),
    generationFollows: init.generationFollows ?? "spec",
    allowsUnconditionalUpdate: init.allowsUnconditionalUpdate ?? true,
    allowsCreateOnUpdate: init.allowsCreateOnUpdate ?? false,
    storageVersion:
      init.storageVersion === undefined || init.storageVersion === descriptor.version
        ? undefined
        : init.storageVersion,
    writeHooks: init.writeHooks,
    get fillEmptyValues() {
      return fillEmpty();
    },
    get rawFields() {
      return rawFields();
    },
    warning: init.warning,
    onRead: init.onRead,
    source: init.source,
    conversion: init.conversion,
    storedAs: init.storedAs,
  });
}
