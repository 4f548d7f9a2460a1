import { ReconcileError } from "@reconcile/api";
import type { ControllerDescriptors } from "./controller-descriptors.js";

const unknownControllerMarker = Symbol.for("reconcile.controller-manager.unknown-controller");

/** A `--controllers` entry names no known controller. `code` is `"controller-manager.unknown-controller"`. */
export class UnknownControllerError extends ReconcileError<"controller-manager.unknown-controller"> {
  readonly [unknownControllerMarker] = true;
  readonly controller: string;

  constructor(controller: string) {
    super("controller-manager.unknown-controller", `${controller} is not in the list of known controllers`);
    this.name = "UnknownControllerError";
    this.controller = controller;
  }

  static override isInstance(error: unknown): error is UnknownControllerError {
    return ReconcileError.hasMarker(error, unknownControllerMarker);
  }
}

/**
 * Parses and validates a `--controllers` value (a comma list; `*` means
 * "everything on by default", `foo` turns foo on, `-foo` turns it off).
 * Entries are canonicalised as upstream does: the leading `-` stripped, an
 * alias mapped to its canonical name, the `-` put back. An entry naming no
 * known controller throws {@link UnknownControllerError} with the name as
 * the user wrote it.
 */
export function parseControllersFlag(
  value: string | readonly string[],
  descriptors: ControllerDescriptors,
): string[] {
  const entries = typeof value === "string" ? value.split(",") : [...value];
  const result: string[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === "") continue;
    if (entry === "*") {
      result.push(entry);
      continue;
    }
    const disabled = entry.startsWith("-");
    const name = disabled ? entry.slice(1) : entry;
    const canonical = descriptors.canonicalName(name);
    if (canonical === undefined) throw new UnknownControllerError(name);
    result.push(disabled ? `-${canonical}` : canonical);
  }
  return result;
}

/**
 * Whether controller `name` runs under the (canonical) `controllers` list:
 * the first entry naming it wins (`name` on, `-name` off); with no such
 * entry it runs iff `*` is present and it is not disabled by default
 * (upstream's `IsControllerEnabled`). So `foo,-foo` runs foo, `-foo,foo`
 * does not, and an empty list runs nothing.
 */
export function isControllerEnabled(
  name: string,
  disabledByDefault: boolean,
  controllers: readonly string[],
): boolean {
  let star = false;
  for (const entry of controllers) {
    if (entry === name) return true;
    if (entry === `-${name}`) return false;
    if (entry === "*") star = true;
  }
  return star && !disabledByDefault;
}
