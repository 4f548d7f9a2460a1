import {
  type GroupResource,
  newAlreadyExists,
  newConflict,
  newInternalError,
  newNotFound,
  newRequestEntityTooLarge,
  newResourceExpired,
  newTimeout,
  newTooManyRequests,
  type StatusError,
  StatusError as StatusErrorClass,
} from "@reconcile/api";
import { StorageError } from "./storage.js";

/** The message kube-apiserver gives for a continue token whose snapshot has been compacted. */
export const continueExpiredMessage =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/** Turns any failure into the `StatusError` a client sees (`storeerr.Interpret*Error`). */
export function toStatusError(error: unknown, gr: GroupResource, name: string): StatusError {
  if (StatusErrorClass.isInstance(error)) return error;
  if (error instanceof StorageError) {
    switch (error.storageCode) {
      case "KeyExists":
        return newAlreadyExists(gr, name);
      case "KeyNotFound":
        return newNotFound(gr, name);
      case "Conflict":
        return newConflict(gr, name);
      case "Expired":
        return newResourceExpired(error.message);
      case "TooLargeResourceVersion":
        return tooLargeResourceVersion(error.message);
      case "WatcherTooSlow":
        return newTooManyRequests(error.message);
      case "ObjectTooLarge":
        return newRequestEntityTooLarge(error.message);
    }
  }
  return newInternalError(error);
}

/** 504 Timeout with a `ResourceVersionTooLarge` cause, as `NewTooLargeResourceVersionError`. */
export function tooLargeResourceVersion(message: string): StatusError {
  const error = newTimeout(message, 1);
  error.status.details = {
    ...error.status.details,
    causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
  };
  return error;
}
