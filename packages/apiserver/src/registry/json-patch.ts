import { newBadRequest, newRequestEntityTooLarge, StatusError } from "@reconcile/api";
import { copyJson, isJsonObject, jsonEqual } from "../json.js";
import {
  maxJsonPatchCopyBytes,
  maxJsonPatchOperations,
  maxNestingDepth,
  nestsDeeperThan,
} from "../limits.js";

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/**
 * Applies a JSON patch. As kube-apiserver bounds it: at most 10,000
 * operations (413), `copy` operations adding at most 3 MiB in all (422), and
 * no operation may nest the document deeper than the decoder accepts (422),
 * so a small patch cannot amplify itself into a huge or deep object.
 */
export function jsonPatch(original: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw newBadRequest("a JSON patch must be an array of operations");
  if (patch.length > maxJsonPatchOperations)
    throw newRequestEntityTooLarge(
      `The allowed maximum operations in a JSON patch is ${maxJsonPatchOperations}, got ${patch.length}`,
    );
  // The stored object shares its managedFields' FieldsV1 trees, frozen: a patch that reaches into
  // managedFields, or copies or moves what holds them, works on a copy of them too.
  const managedFields = "/metadata/managedFields";
  const touchesManagedFields = patch.some(
    (raw) =>
      isJsonObject(raw) &&
      [raw.path, raw.from].some(
        (path) =>
          typeof path === "string" && (path.startsWith(managedFields) || managedFields.startsWith(path)),
      ),
  );
  let document = touchesManagedFields ? structuredClone(original) : copyJson(original);
  const budget = { copiedBytes: 0 };
  patch.forEach((raw, index) => {
    if (!isJsonObject(raw) || typeof raw.op !== "string" || typeof raw.path !== "string")
      throw newBadRequest(`JSON patch operation ${index} must be an object with string "op" and "path"`);
    document = applyOperation(document, raw as unknown as Operation, index, budget);
  });
  return document;
}

function applyOperation(
  document: unknown,
  operation: Operation,
  index: number,
  budget: { copiedBytes: number },
): unknown {
  const fail = (reason: string): never => {
    throw new StatusError({
      code: 422,
      reason: "Invalid",
      message: `the JSON patch could not be applied: operation ${index} (${operation.op} ${operation.path}): ${reason}`,
    });
  };
  const needsValue = operation.op === "add" || operation.op === "replace" || operation.op === "test";
  if (needsValue && !("value" in operation))
    throw newBadRequest(`JSON patch operation ${index} (${operation.op}) has no "value"`);
  // A value placed under `path` nests as deep as the path is long plus its own depth.
  const checkDepth = (path: string[], value: unknown) => {
    if (nestsDeeperThan(value, maxNestingDepth - path.length))
      fail(`the value would nest the object more than ${maxNestingDepth} levels deep`);
  };
  switch (operation.op) {
    case "add": {
      const path = parsePointer(operation.path);
      checkDepth(path, operation.value);
      return addAt(document, path, copyJson(operation.value), fail);
    }
    case "remove":
      return removeAt(document, parsePointer(operation.path), fail).document;
    case "replace": {
      const path = parsePointer(operation.path);
      checkDepth(path, operation.value);
      const removed = removeAt(document, path, fail).document;
      return addAt(removed, path, copyJson(operation.value), fail);
    }
    case "move": {
      if (typeof operation.from !== "string")
        throw newBadRequest(`JSON patch operation ${index} (move) has no "from"`);
      const path = parsePointer(operation.path);
      const { document: without, value } = removeAt(document, parsePointer(operation.from), fail);
      checkDepth(path, value);
      return addAt(without, path, value, fail);
    }
    case "copy": {
      if (typeof operation.from !== "string")
        throw newBadRequest(`JSON patch operation ${index} (copy) has no "from"`);
      const path = parsePointer(operation.path);
      const value = valueAt(document, parsePointer(operation.from), fail);
      checkDepth(path, value);
      // As json-patch's AccumulatedCopySizeLimit, which kube-apiserver sets to JSONPatchMaxCopyBytes.
      budget.copiedBytes += Buffer.byteLength(JSON.stringify(value) ?? "");
      if (budget.copiedBytes > maxJsonPatchCopyBytes)
        fail(
          `Unable to complete the copy, the accumulated size increase of copy is ${budget.copiedBytes}, exceeding the limit ${maxJsonPatchCopyBytes}`,
        );
      return addAt(document, path, copyJson(value), fail);
    }
    case "test": {
      const value = valueAt(document, parsePointer(operation.path), fail);
      if (!jsonEqual(value, operation.value)) fail(`testing value ${JSON.stringify(operation.path)} failed`);
      return document;
    }
    default:
      throw newBadRequest(`JSON patch operation ${index} has an unknown op ${JSON.stringify(operation.op)}`);
  }
}

function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/"))
    throw newBadRequest(`JSON pointer ${JSON.stringify(pointer)} must start with "/"`);
  return pointer
    .slice(1)
    .split("/")
    .map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function valueAt(document: unknown, path: string[], fail: (reason: string) => never): unknown {
  let current = document;
  for (const token of path) {
    if (Array.isArray(current)) {
      const i = arrayIndex(token, current.length - 1, fail);
      current = current[i];
    } else if (isJsonObject(current) && Object.hasOwn(current, token)) {
      current = current[token];
    } else {
      fail("the path does not exist");
    }
  }
  return current;
}

function addAt(document: unknown, path: string[], value: unknown, fail: (reason: string) => never): unknown {
  if (path.length === 0) return value;
  const parent = valueAt(document, path.slice(0, -1), fail);
  const last = path[path.length - 1]!;
  if (Array.isArray(parent)) {
    if (last === "-") parent.push(value);
    else parent.splice(arrayIndex(last, parent.length, fail), 0, value);
  } else if (isJsonObject(parent)) {
    parent[last] = value;
  } else {
    fail("the parent of the path is not an object or array");
  }
  return document;
}

function removeAt(
  document: unknown,
  path: string[],
  fail: (reason: string) => never,
): { document: unknown; value: unknown } {
  if (path.length === 0) return { document: null, value: document };
  const parent = valueAt(document, path.slice(0, -1), fail);
  const last = path[path.length - 1]!;
  if (Array.isArray(parent)) {
    const i = arrayIndex(last, parent.length - 1, fail);
    const [value] = parent.splice(i, 1);
    return { document, value };
  }
  if (isJsonObject(parent) && Object.hasOwn(parent, last)) {
    const value = parent[last];
    delete parent[last];
    return { document, value };
  }
  return fail("the path does not exist");
}

function arrayIndex(token: string, max: number, fail: (reason: string) => never): number {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) fail(`${JSON.stringify(token)} is not an array index`);
  const index = Number(token);
  if (index > max) fail(`index ${index} is out of range`);
  return index;
}
