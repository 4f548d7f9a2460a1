import { Etcd3, type IOptions } from "etcd3";

type Policy = NonNullable<NonNullable<IOptions["faultHandling"]>["global"]>;

/**
 * An `etcd3` client fit for API storage. The library's defaults retry every
 * "recoverable" error three times, writes included (a retried create then
 * reports AlreadyExists for its own write), and open a per-member circuit
 * breaker after three failures that refuses every call for 5 s (one request
 * over etcd's size limit locks the storage out). Both are turned off here; the
 * storage repeats reads itself and writes only when they never left.
 * Responses may be as large as etcd sends (a list of 10,000 objects).
 */
export function createEtcdClient(
  endpoints: string | readonly string[],
  options: Omit<IOptions, "hosts"> = {},
): Etcd3 {
  const hosts = (typeof endpoints === "string" ? endpoints.split(",") : [...endpoints])
    .map((host) => host.trim())
    .filter((host) => host !== "");
  if (hosts.length === 0) throw new TypeError("createEtcdClient: no etcd endpoints given");
  return new Etcd3({
    ...options,
    hosts,
    grpcOptions: {
      "grpc.max_receive_message_length": -1,
      "grpc.max_send_message_length": 2 * 1024 * 1024,
      ...options.grpcOptions,
    },
    faultHandling: { host: () => passThrough, global: passThrough, ...options.faultHandling },
  });
}

const noEvent = () => ({ dispose: () => {} });
const notAborted = new AbortController().signal;

/** A cockatiel policy that runs the call once: no retry, no breaker. */
const passThrough: Policy = {
  _altReturn: undefined as never,
  onSuccess: noEvent,
  onFailure: noEvent,
  execute: async (fn, signal) => fn({ signal: signal ?? notAborted }),
} as Policy;
