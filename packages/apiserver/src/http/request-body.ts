import type { IncomingMessage } from "node:http";
import { type KubeObject, newBadRequest, newRequestEntityTooLarge, StatusError } from "@reconcile/api";
import { checkNesting } from "../limits.js";
import { decodeKubernetesProtobuf, ProtobufDecodeError, protobufMediaType } from "../protobuf/decode.js";
import { mediaTypeOf } from "./negotiation.js";
import { parseYaml } from "./yaml-body.js";

/** kube-apiserver's default limit on a request body (`--max-request-bytes` is 3 MB for JSON). */
export const defaultMaxRequestBytes = 3 * 1024 * 1024;

/**
 * Reads a request body, refusing more than `maxBytes` with a 413 Status
 * (checked against Content-Length before reading, and while reading).
 */
export function readRequestBody(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers["content-length"]);
    if (Number.isFinite(declared) && declared > maxBytes) {
      request.resume();
      reject(newRequestEntityTooLarge(`limit is ${maxBytes}`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    request.on("data", (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > maxBytes) {
        failed = true;
        chunks.length = 0;
        reject(newRequestEntityTooLarge(`limit is ${maxBytes}`));
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => {
      if (!failed) resolve(Buffer.concat(chunks, size));
    });
    request.on("error", (error) => {
      if (!failed) reject(newBadRequest(`the request body could not be read: ${error.message}`));
      failed = true;
    });
  });
}

/** Decodes an object body: JSON, YAML, or a Kubernetes protobuf body kubectl's generators send. */
export function decodeObjectBody(
  contentType: string | undefined,
  body: Buffer,
  messageOf: (apiVersion: string, kind: string) => string | undefined,
): unknown {
  const media = mediaTypeOf(contentType);
  if (media === protobufMediaType) {
    try {
      const object = decodeKubernetesProtobuf(body, messageOf) satisfies KubeObject;
      checkNesting(object, "the request body");
      return object;
    } catch (error) {
      if (ProtobufDecodeError.isInstance(error)) {
        throw newBadRequest(`the protobuf body could not be decoded: ${error.message}`);
      }
      throw error;
    }
  }
  if (media === "" || media === "application/json" || media === "*/*") return parseJson(body);
  if (media === "application/yaml") return parseYaml(body);
  throw new StatusError({
    code: 415,
    reason: "UnsupportedMediaType",
    message: `the body of the request was in an unknown format (${contentType ?? ""}) - accepted media types include: application/json, application/yaml, ${protobufMediaType}`,
  });
}

/** The patch types by request Content-Type. */
const patchTypes: Readonly<Record<string, "merge" | "json" | "strategic-merge" | "apply">> = {
  "application/merge-patch+json": "merge",
  "application/json-patch+json": "json",
  "application/strategic-merge-patch+json": "strategic-merge",
  "application/apply-patch+yaml": "apply",
  "application/apply-patch+json": "apply",
};

/** The patch type a PATCH request's Content-Type names; undefined for none. */
export function patchTypeOf(contentType: string | undefined): (typeof patchTypes)[string] | undefined {
  return patchTypes[mediaTypeOf(contentType)];
}

/** The patch type and the decoded patch of a PATCH request. */
export function decodePatchBody(
  contentType: string | undefined,
  body: Buffer,
): { type: "merge" | "json" | "strategic-merge" | "apply"; patch: unknown } {
  const type = patchTypeOf(contentType);
  if (type === undefined) {
    throw new StatusError({
      code: 415,
      reason: "UnsupportedMediaType",
      message: `the body of the request was in an unknown format - accepted media types include: ${Object.keys(patchTypes).join(", ")}`,
    });
  }
  if (type === "apply") {
    // kubectl sends apply patches as JSON (which is YAML too); other clients send YAML proper.
    let patch: unknown;
    try {
      patch = JSON.parse(body.toString("utf8"));
    } catch {
      return { type, patch: parseYaml(body) };
    }
    checkNesting(patch, "the request body");
    return { type, patch };
  }
  return { type, patch: parseJson(body) };
}

/** Parses a JSON body; one nested too deep for the server is a 400 (`JSON.parse` itself does not recurse). */
export function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw newBadRequest("the request body is empty");
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch (error) {
    throw newBadRequest(`the request body is not valid JSON: ${(error as Error).message}`);
  }
  checkNesting(value, "the request body");
  return value;
}
