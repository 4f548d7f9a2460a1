import type * as http from "node:http";
import type { ResourceDescriptor } from "@reconcile/api";
import { customForWire } from "../registry/go-order.js";
import type { HandlerContext } from "./context.js";
import { listItemEncoder } from "./list-encoding.js";
import { requestedMetadataForm, requestedTableVersion } from "./negotiation.js";
import { listOptions, parseIncludeObjectParam, validateListQuery } from "./parameters.js";
import {
  metadataContentType,
  metadataFormMismatch,
  partialObjectMetadata,
  partialObjectMetadataList,
} from "./partial-metadata.js";
import { jsonContentType, send, sendList } from "./respond.js";
import { tableContentType, toTable } from "./table.js";

/** `GET` of one object or of a subresource; as a Table, when the client asks, if it answers with the kind itself. */
export async function serveGet(
  context: HandlerContext,
  resource: ResourceDescriptor,
  namespace: string | undefined,
  name: string,
  subresource: string | undefined,
  query: URLSearchParams,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const object = await context.registry.get(resource, namespace, name, { subresource });
  const tableVersion = requestedTableVersion(request.headers.accept);
  // A subresource that answers with another kind (a Scale) is sent as it is.
  if (tableVersion !== undefined && (subresource === undefined || object.kind === resource.kind)) {
    const table = toTable(
      resource,
      [object],
      {},
      {
        now: context.clock.now(),
        version: tableVersion,
        printer: context.printerOf(resource),
        includeObject: parseIncludeObjectParam(query),
      },
    );
    return send(response, 200, table, tableContentType(tableVersion));
  }
  const metadataForm = requestedMetadataForm(request.headers.accept);
  if (metadataForm !== undefined && (subresource === undefined || object.kind === resource.kind)) {
    if (metadataForm.kind !== "PartialObjectMetadata")
      throw metadataFormMismatch(metadataForm, resource.kind);
    return send(
      response,
      200,
      partialObjectMetadata(object, metadataForm),
      metadataContentType(metadataForm),
    );
  }
  return send(response, 200, customForWire(resource, object));
}

/** `GET` of a collection: a list, or a Table of it, streamed item by item. */
export async function serveList(
  context: HandlerContext,
  resource: ResourceDescriptor,
  namespace: string | undefined,
  query: URLSearchParams,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const tableVersion = requestedTableVersion(request.headers.accept);
  const includeObject = tableVersion === undefined ? undefined : parseIncludeObjectParam(query);
  validateListQuery(query);
  const list = await context.registry.list(resource, namespace, listOptions(query));
  if (tableVersion !== undefined) {
    const table = toTable(resource, list.items, list.metadata, {
      now: context.clock.now(),
      version: tableVersion,
      printer: context.printerOf(resource),
      includeObject,
    });
    const { rows, ...rest } = table;
    return sendList(response, rest, "rows", rows, tableContentType(tableVersion));
  }
  const metadataForm = requestedMetadataForm(request.headers.accept);
  if (metadataForm !== undefined) {
    if (metadataForm.kind !== "PartialObjectMetadataList")
      throw metadataFormMismatch(metadataForm, resource.listKind);
    const envelope = partialObjectMetadataList(list.metadata, metadataForm);
    const items = list.items.map((item) => partialObjectMetadata(item, metadataForm));
    return sendList(response, envelope, "items", items, metadataContentType(metadataForm));
  }
  const { items, ...envelope } = list;
  return sendList(response, envelope, "items", items, jsonContentType, listItemEncoder(resource));
}
