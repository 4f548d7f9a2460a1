import {
  type ConfigMap,
  configMaps,
  type Deployment,
  deployments,
  type Service,
  services,
} from "@reconcile/api";
import {
  createOrUpdate,
  generationChanged,
  type Manager,
  newControllerManagedBy,
  or,
  type ReconcileContext,
  type ReconcileResult,
  type Request,
  reconcileFinalizer,
  setCondition,
  setControllerReference,
  updateStatus,
} from "@reconcile/runtime";
import { type Website, websites } from "./website.js";

/** Held by every Website until the operator has said goodbye to it. */
export const finalizer = "example.reconcile.dev/cleanup";

/**
 * Registers the Website controller with `manager`: for each Website it keeps
 * a ConfigMap holding the page, a Deployment serving it and a Service in
 * front, all controlled by the Website (so they go with it), and reports
 * `Ready` and `observedGeneration` in its status.
 */
export function setupWebsiteController(manager: Manager, options: { workers?: number } = {}): void {
  newControllerManagedBy(manager)
    .named("website")
    // Status writes bump no generation: only spec changes and deletions (a finalizer change) reconcile.
    .for(websites, {
      predicates: [or(generationChanged(), { update: (_, w) => !!w.metadata?.deletionTimestamp })],
    })
    .owns(configMaps)
    .owns(deployments)
    .owns(services)
    .withOptions({ workers: options.workers ?? 2 })
    .complete(reconcileWebsite);
}

export async function reconcileWebsite(request: Request, ctx: ReconcileContext): Promise<ReconcileResult> {
  const website = ctx.get(websites, request);
  if (website === undefined) return; // deleted; its children go with it
  const client = ctx.client.resource(websites, request.namespace);
  const outcome = await reconcileFinalizer(
    client,
    website,
    finalizer,
    async (w) => {
      ctx.recorder.event(w as Website, "Normal", "Deleted", `website ${w.metadata?.name} is going away`);
    },
    { signal: ctx.signal },
  );
  // Being deleted: the cleanup ran (or was not ours to run). Just added: carry on, as that write
  // changed no generation and so brings no new reconcile.
  if (outcome === "finalized" || outcome === "deleting") return;

  const { namespace, name } = request;
  const labels = { app: "website", "example.reconcile.dev/website": name };
  const own = <T extends ConfigMap | Deployment | Service>(obj: T) =>
    setControllerReference(website, websites, obj);
  const { signal } = ctx;

  const page = await createOrUpdate(
    ctx.client.resource(configMaps, namespace),
    meta<ConfigMap>(`${name}-content`, namespace),
    (cm) => {
      cm.metadata!.labels = labels;
      cm.data = { "index.html": website.spec.page };
      own(cm);
    },
    { signal },
  );

  const deployment = await createOrUpdate(
    ctx.client.resource(deployments, namespace),
    meta<Deployment>(name, namespace),
    (d) => {
      d.metadata!.labels = labels;
      d.spec = {
        ...d.spec,
        replicas: website.spec.replicas ?? 2,
        selector: { matchLabels: labels },
        template: {
          metadata: {
            labels,
            annotations: {
              "example.reconcile.dev/content-version": page.object.metadata?.resourceVersion ?? "",
            },
          },
          spec: {
            containers: [
              {
                name: "web",
                image: website.spec.image ?? "nginx:1.27",
                ports: [{ name: "http", containerPort: 80 }],
                volumeMounts: [{ name: "content", mountPath: "/usr/share/nginx/html" }],
              },
            ],
            volumes: [{ name: "content", configMap: { name: `${name}-content` } }],
          },
        },
      };
      own(d);
    },
    { signal },
  );

  await createOrUpdate(
    ctx.client.resource(services, namespace),
    meta<Service>(name, namespace),
    (s) => {
      s.metadata!.labels = labels;
      s.spec = { ...s.spec, selector: labels, ports: [{ name: "http", port: 80, targetPort: "http" }] };
      own(s);
    },
    { signal },
  );

  const wanted = website.spec.replicas ?? 2;
  const available = deployment.object.status?.availableReplicas ?? 0;
  await updateStatus(
    client,
    name,
    (w) => {
      const conditions = (w.status ??= {}).conditions ?? [];
      if (website.metadata?.generation !== undefined)
        w.status.observedGeneration = website.metadata.generation;
      w.status.availableReplicas = available;
      setCondition(
        conditions,
        available >= wanted
          ? {
              type: "Ready",
              status: "True",
              reason: "Available",
              message: `${available}/${wanted} replicas available`,
              observedGeneration: website.metadata?.generation,
            }
          : {
              type: "Ready",
              status: "False",
              reason: "Progressing",
              message: `${available}/${wanted} replicas available`,
              observedGeneration: website.metadata?.generation,
            },
        new Date(ctx.clock.now()),
      );
      w.status.conditions = conditions;
    },
    { signal },
  );
  if (page.result !== "unchanged" || deployment.result !== "unchanged") {
    ctx.recorder.event(
      website as Website,
      "Normal",
      "Synced",
      `configmap ${page.result}, deployment ${deployment.result}`,
    );
  }
}

function meta<T extends ConfigMap | Deployment | Service>(name: string, namespace: string): T {
  return { metadata: { name, namespace } } as T;
}
