import {
  type ControllerRevision,
  controllerRevisions,
  type DaemonSet,
  type DeepReadonly,
  daemonSets,
  isAlreadyExists,
  type Pod,
  pods as podsResource,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  canonicalJson,
  computeHash,
  controllerRevisionName,
  templateRevisionData,
} from "@reconcile/controller";
import { controllerKind, daemonSetRevisionLabel } from "./daemonset-util.js";

type DS = DeepReadonly<DaemonSet>;
type Revision = DeepReadonly<ControllerRevision>;

/** Whether a revision holds the DaemonSet's template now (upstream `Match`). */
export function matchesRevision(ds: DS, revision: Revision): boolean {
  return canonicalJson(templateRevisionData(ds.spec?.template)) === canonicalJson(revision.data ?? null);
}

/** The highest revision number, 0 for none (upstream `maxRevision`). */
export function maxRevision(revisions: readonly Revision[]): number {
  return revisions.reduce((max, revision) => Math.max(max, revision.revision), 0);
}

/**
 * The DaemonSet's revisions split into the current one and the old ones
 * (upstream `constructHistory`): the revision matching the template now,
 * made if missing (named `<set>-<template hash>`), duplicates of it merged
 * into the newest, and renumbered to the top when older revisions overtook it.
 */
export async function constructHistory(
  client: Client,
  ds: DS,
  owned: readonly Revision[],
  pods: readonly DeepReadonly<Pod>[],
  signal: AbortSignal | undefined,
): Promise<{ current: Revision; old: Revision[] }> {
  const api = client.resource(controllerRevisions, ds.metadata?.namespace ?? "");
  const currents: Revision[] = [];
  const old: Revision[] = [];
  for (let revision of owned) {
    if (revision.metadata?.labels?.[daemonSetRevisionLabel] === undefined) {
      // Labelled with its name rather than a hash, so that no collision is possible.
      const relabelled = structuredClone(revision) as ControllerRevision;
      relabelled.metadata!.labels = {
        ...relabelled.metadata!.labels,
        [daemonSetRevisionLabel]: revision.metadata?.name ?? "",
      };
      revision = await api.update(relabelled, { signal });
    }
    (matchesRevision(ds, revision) ? currents : old).push(revision);
  }
  const next = maxRevision(old) + 1;
  if (currents.length === 0) return { current: await snapshot(client, ds, next, signal), old };
  let current = await dedupCurrent(client, ds, currents, pods, signal);
  if (current.revision < next)
    current = await api.update(
      { ...(structuredClone(current) as ControllerRevision), revision: next },
      { signal },
    );
  return { current, old };
}

/**
 * Saves the template as a new revision (upstream `snapshot`). A revision of
 * that name with another template is a hash collision: the DaemonSet's
 * `status.collisionCount` grows so that the next sync picks another name.
 */
async function snapshot(
  client: Client,
  ds: DS,
  revision: number,
  signal: AbortSignal | undefined,
): Promise<Revision> {
  const namespace = ds.metadata?.namespace ?? "";
  const hash = computeHash(ds.spec?.template, ds.status?.collisionCount);
  const meta = ds.metadata ?? {};
  const created: ControllerRevision = {
    apiVersion: "apps/v1",
    kind: "ControllerRevision",
    metadata: {
      name: controllerRevisionName(meta.name ?? "", hash),
      namespace,
      labels: { ...ds.spec?.template?.metadata?.labels, [daemonSetRevisionLabel]: hash },
      ...(meta.annotations !== undefined ? { annotations: { ...meta.annotations } } : {}),
      ownerReferences: [
        {
          ...controllerKind,
          name: meta.name ?? "",
          uid: meta.uid ?? "",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: templateRevisionData(ds.spec?.template),
    revision,
  };
  const api = client.resource(controllerRevisions, namespace);
  try {
    return await api.create(created, { signal });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    const existing = await api.get(created.metadata!.name!, { signal });
    if (matchesRevision(ds, existing)) return existing;
    const fresh = await client.resource(daemonSets, namespace).get(meta.name ?? "", { signal });
    if ((fresh.status?.collisionCount ?? undefined) !== (ds.status?.collisionCount ?? undefined))
      throw new Error(
        `found a stale collision count (${fresh.status?.collisionCount ?? 0}, expected ${ds.status?.collisionCount ?? 0}) of DaemonSet "${meta.name}" while processing; will retry until it is updated`,
      );
    const collisionCount = (fresh.status?.collisionCount ?? 0) + 1;
    await client
      .resource(daemonSets, namespace)
      .updateStatus({ ...fresh, status: { ...fresh.status!, collisionCount } }, { signal });
    throw error;
  }
}

/**
 * Keeps the newest of several revisions holding the current template,
 * relabels the pods of the others with its hash and deletes them (upstream `dedupCurHistories`).
 */
async function dedupCurrent(
  client: Client,
  ds: DS,
  currents: Revision[],
  pods: readonly DeepReadonly<Pod>[],
  signal: AbortSignal | undefined,
): Promise<Revision> {
  if (currents.length === 1) return currents[0]!;
  const keep = currents.reduce((best, revision) => (revision.revision > best.revision ? revision : best));
  const keepHash = keep.metadata?.labels?.[daemonSetRevisionLabel] ?? "";
  const namespace = ds.metadata?.namespace ?? "";
  for (const duplicate of currents) {
    if (duplicate === keep) continue;
    const hash = duplicate.metadata?.labels?.[daemonSetRevisionLabel];
    for (const pod of pods) {
      if (pod.metadata?.labels?.[daemonSetRevisionLabel] !== hash) continue;
      await client
        .resource(podsResource, namespace)
        .patch(
          pod.metadata?.name ?? "",
          { metadata: { labels: { [daemonSetRevisionLabel]: keepHash } } },
          { type: "strategic-merge", signal },
        );
    }
    await client.resource(controllerRevisions, namespace).delete(duplicate.metadata?.name ?? "", { signal });
  }
  return keep;
}

/**
 * Deletes the oldest old revisions beyond `revisionHistoryLimit` that no
 * pod is labelled with (upstream `cleanupHistory`).
 */
export async function cleanupHistory(
  client: Client,
  ds: DS,
  old: readonly Revision[],
  pods: readonly DeepReadonly<Pod>[],
  signal: AbortSignal | undefined,
): Promise<void> {
  let toKill = old.length - (ds.spec?.revisionHistoryLimit ?? 10);
  if (toKill <= 0) return;
  const live = new Set(pods.map((pod) => pod.metadata?.labels?.[daemonSetRevisionLabel]));
  const api = client.resource(controllerRevisions, ds.metadata?.namespace ?? "");
  for (const revision of [...old].sort((a, b) => a.revision - b.revision)) {
    if (toKill <= 0) break;
    if (live.has(revision.metadata?.labels?.[daemonSetRevisionLabel])) continue;
    await api.delete(revision.metadata?.name ?? "", { signal });
    toKill--;
  }
}
