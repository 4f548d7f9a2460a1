import { errorMessage, type Status, StatusError, type StatusReason } from "@reconcile/api";

/** The reason and message client-go gives an error response that carries no Status (`NewGenericServerResponse`). */
const genericResponses: Readonly<Record<number, [StatusReason, string]>> = {
  400: ["BadRequest", "the server rejected our request for an unknown reason"],
  401: ["Unauthorized", "the server has asked for the client to provide credentials"],
  403: ["Forbidden", "the server does not allow access to the requested resource"],
  404: ["NotFound", "the server could not find the requested resource"],
  405: ["MethodNotAllowed", "the server does not allow this method on the requested resource"],
  406: ["NotAcceptable", "the server was unable to respond with a content type that the client supports"],
  409: ["Conflict", "the server reported a conflict"],
  410: ["Gone", "the server has asked for the client to provide credentials"],
  413: ["RequestEntityTooLarge", "the server has rejected the request because it is too large"],
  415: ["UnsupportedMediaType", "the server was unable to handle the request body's content type"],
  422: ["Invalid", "the server rejected our request due to an error in our request"],
  429: ["TooManyRequests", "the server has received too many requests and has asked us to try again later"],
  500: ["InternalError", "an error on the server has prevented the request from succeeding"],
  503: ["ServiceUnavailable", "the server is currently unable to handle the request"],
  504: [
    "Timeout",
    "the server was unable to return a response in the time allotted, but may still be processing the request",
  ],
};

/**
 * The `StatusError` for an HTTP error response: the server's own `Status` when
 * the body is one, otherwise a Status made from the code, as client-go does.
 */
export function statusErrorFromResponse(code: number, body: string, retryAfterSeconds?: number): StatusError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  if (parsed !== null && typeof parsed === "object" && (parsed as { kind?: unknown }).kind === "Status") {
    const status = parsed as Status;
    return new StatusError({ ...status, code: status.code || code });
  }
  const [reason, message] = genericResponses[code] ?? [
    "",
    `the server responded with the status code ${code}`,
  ];
  const trimmed = body.trim();
  return new StatusError({
    code,
    reason,
    message: trimmed !== "" && trimmed.length < 512 ? `${message} (${trimmed})` : message,
    ...(retryAfterSeconds !== undefined ? { details: { retryAfterSeconds } } : {}),
  });
}

/** A failure to reach the server at all (refused, reset, DNS, TLS) as a 503 `StatusError` keeping the cause. */
export function connectionError(server: string, cause: unknown): StatusError {
  const text = errorMessage(cause);
  return new StatusError(
    {
      code: 503,
      reason: "ServiceUnavailable",
      message: `unable to reach the API server at ${server}: ${text}`,
    },
    { cause },
  );
}
