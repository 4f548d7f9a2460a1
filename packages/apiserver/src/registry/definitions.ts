import { apiVersionOf, type ResourceDescriptor } from "@reconcile/api";
import type { ResourceDefinition } from "./resource-definition.js";

/** What changed in a {@link ResourceDefinitions}: the definition added or removed. */
export interface DefinitionsChange {
  readonly type: "added" | "removed";
  readonly definition: ResourceDefinition;
}

/**
 * The kinds a server serves, live: kube-apiserver's set of installed
 * `RESTStorage`s plus the CRD handler's dynamic set. Routing, discovery,
 * OpenAPI, tables, the garbage collector and the in-process client read it on
 * every request, so a definition added while the server runs is served
 * everywhere at once, and one removed is a 404 from the next request on.
 */
export class ResourceDefinitions {
  readonly #byResource = new Map<string, ResourceDefinition>();
  readonly #byApiVersionKind = new Map<string, ResourceDefinition>();
  readonly #listeners = new Set<(change: DefinitionsChange) => void>();
  #list: readonly ResourceDefinition[] = [];
  #descriptors: readonly ResourceDescriptor[] = [];
  #generation = 0;

  constructor(definitions: Iterable<ResourceDefinition> = []) {
    for (const definition of definitions) this.#insert(definition);
    this.#snapshot();
  }

  /**
   * Serves a kind at a version from now on. A definition of the same group,
   * version and plural replaces the old one (as an updated CRD does); one of
   * another plural claiming a served apiVersion and kind is refused. Several
   * versions of one kind are several definitions (see `storageVersion`).
   */
  add(definition: ResourceDefinition): void {
    const { descriptor } = definition;
    const kindOwner = this.#byApiVersionKind.get(apiVersionKindOf(descriptor));
    if (kindOwner !== undefined && kindOwner.descriptor.plural !== descriptor.plural)
      throw new Error(
        `ResourceDefinitions.add: ${apiVersionOf(descriptor)} ${descriptor.kind} is already served as ${kindOwner.descriptor.plural}`,
      );
    this.#insert(definition);
    this.#snapshot();
    this.#emit({ type: "added", definition });
  }

  /** Stops serving a kind at a version; its stored objects stay where they are. Returns whether it was served. */
  remove(resource: Pick<ResourceDescriptor, "group" | "version" | "plural">): boolean {
    const definition = this.#byResource.get(resourceKeyOf(resource));
    if (definition === undefined) return false;
    this.#byResource.delete(resourceKeyOf(definition.descriptor));
    this.#byApiVersionKind.delete(apiVersionKindOf(definition.descriptor));
    this.#snapshot();
    this.#emit({ type: "removed", definition });
    return true;
  }

  /** Calls `listener` after every add and remove; returns how to stop. */
  onChange(listener: (change: DefinitionsChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The served definition of a group, version and plural, if any. */
  get(resource: Pick<ResourceDescriptor, "group" | "version" | "plural">): ResourceDefinition | undefined {
    return this.#byResource.get(resourceKeyOf(resource));
  }

  /** The served definition of an `apiVersion` and `kind` (an owner reference's), if any. */
  forKind(apiVersion: string, kind: string): ResourceDefinition | undefined {
    return this.#byApiVersionKind.get(`${apiVersion}/${kind}`);
  }

  /** Every served definition, in the order they were first added (discovery order). */
  list(): readonly ResourceDefinition[] {
    return this.#list;
  }

  /** The served descriptors, in discovery order; a new array after each change, the same one until then. */
  descriptors(): readonly ResourceDescriptor[] {
    return this.#descriptors;
  }

  /** Bumped by every change, so that what is derived from the set (OpenAPI, ETags) can be cached. */
  get generation(): number {
    return this.#generation;
  }

  #insert(definition: ResourceDefinition): void {
    const old = this.#byResource.get(resourceKeyOf(definition.descriptor));
    if (old !== undefined) this.#byApiVersionKind.delete(apiVersionKindOf(old.descriptor));
    this.#byResource.set(resourceKeyOf(definition.descriptor), definition);
    this.#byApiVersionKind.set(apiVersionKindOf(definition.descriptor), definition);
  }

  #snapshot(): void {
    this.#list = Object.freeze([...this.#byResource.values()]);
    this.#descriptors = Object.freeze(this.#list.map((definition) => definition.descriptor));
    this.#generation++;
  }

  #emit(change: DefinitionsChange): void {
    for (const listener of [...this.#listeners]) listener(change);
  }
}

/** The key a definition is served by: group, version and plural. */
export const resourceKeyOf = (resource: Pick<ResourceDescriptor, "group" | "version" | "plural">) =>
  `${resource.group}/${resource.version}/${resource.plural}`;
const apiVersionKindOf = (resource: Pick<ResourceDescriptor, "group" | "version" | "kind">) =>
  `${apiVersionOf(resource)}/${resource.kind}`;
