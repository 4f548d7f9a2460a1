/** Servers and objects the registry tests share. */
import type { Deployment, KubeObject, Pod, ReplicaSet, StatusError } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { ApiServer } from "../api-server.js";

const servers: ApiServer[] = [];
export function newServer(options: ConstructorParameters<typeof ApiServer>[0] = {}): ApiServer {
  const server = new ApiServer({ clock: new FakeClock(Date.UTC(2026, 0, 1)), ...options });
  servers.push(server);
  return server;
}

/** Closes every server made by {@link newServer}; each test file runs it after each test. */
export async function closeServers(): Promise<void> {
  for (const server of servers.splice(0)) await server.close();
}

export async function rejection(promise: Promise<unknown>): Promise<StatusError> {
  try {
    await promise;
  } catch (error) {
    return error as StatusError;
  }
  throw new Error("expected a rejection");
}

export function deployment(name: string, patch: Partial<Deployment["spec"]> = {}): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
      },
      ...patch,
    },
  };
}

export function replicaSet(name: string, ownerUid?: string, blockOwnerDeletion = true): ReplicaSet {
  return {
    metadata: {
      name,
      labels: { app: name },
      ...(ownerUid
        ? {
            ownerReferences: [
              {
                apiVersion: "apps/v1",
                kind: "Deployment",
                name: "web",
                uid: ownerUid,
                controller: true,
                blockOwnerDeletion,
              },
            ],
          }
        : {}),
    },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "app", image: "nginx" }] },
      },
    },
  };
}

export function pod(
  name: string,
  options: { nodeName?: string; owner?: KubeObject; labels?: Record<string, string> } = {},
): Pod {
  const owner = options.owner;
  return {
    metadata: {
      name,
      labels: options.labels ?? {},
      ...(owner
        ? {
            ownerReferences: [
              {
                apiVersion: owner.apiVersion!,
                kind: owner.kind!,
                name: owner.metadata!.name!,
                uid: owner.metadata!.uid!,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      containers: [{ name: "app", image: "nginx" }],
      ...(options.nodeName ? { nodeName: options.nodeName } : {}),
    },
  };
}
