// The cluster's objects: nodes with their pods, workloads with what they
// own, Services with their endpoints.
import { html } from "/vendor/preact.js";
import { keyOf } from "./cluster.js";
import { age, byName, controllerOf, isReady, nodeReady, podStatus, statusClass } from "./ui.js";

function PodChip({ pod, onSelect, selected }) {
  const status = podStatus(pod);
  const key = keyOf(pod);
  return html`<button
    class="pod ${statusClass(status)} ${selected === key ? "selected" : ""}"
    title="${key} ${status}"
    aria-label="pod ${key} ${status}"
    data-pod=${key}
    onClick=${() => onSelect(key)}
  ></button>`;
}

function matches(pod, filter) {
  return filter === "" || keyOf(pod).includes(filter);
}

export function NodesView({ store, filter, onSelect, selected }) {
  const pods = [...store.get("pods").values()].filter((pod) => matches(pod, filter));
  const byNode = new Map();
  for (const pod of pods) {
    const node = pod.spec?.nodeName ?? "";
    if (!byNode.has(node)) byNode.set(node, []);
    byNode.get(node).push(pod);
  }
  const nodes = [...store.get("nodes").values()].sort(byName);
  const unscheduled = byNode.get("") ?? [];
  return html`<section class="nodes" aria-label="nodes">
    ${nodes.map((node) => {
      const name = node.metadata.name;
      const onNode = (byNode.get(name) ?? []).sort(byName);
      const ready = nodeReady(node);
      const cordoned = node.spec?.unschedulable === true;
      return html`<article class="node ${ready ? "" : "not-ready"}" data-node=${name} aria-label="node ${name}">
        <header>
          <h3>${name}</h3>
          <span class="badge ${ready ? "ok" : "bad"}">${ready ? "Ready" : "NotReady"}</span>
          ${cordoned && html`<span class="badge pending">SchedulingDisabled</span>`}
          <span class="count" data-count=${onNode.length}>${onNode.length} pods</span>
        </header>
        <div class="pods">${onNode.map((pod) => html`<${PodChip} key=${keyOf(pod)} pod=${pod} onSelect=${onSelect} selected=${selected} />`)}</div>
      </article>`;
    })}
    ${
      unscheduled.length > 0 &&
      html`<article class="node unscheduled" data-node="" aria-label="pods without a node">
        <header><h3>not scheduled</h3><span class="count" data-count=${unscheduled.length}>${unscheduled.length} pods</span></header>
        <div class="pods">${unscheduled.sort(byName).map((pod) => html`<${PodChip} key=${keyOf(pod)} pod=${pod} onSelect=${onSelect} selected=${selected} />`)}</div>
      </article>`
    }
  </section>`;
}

/** Objects owned (as controller) by each owner UID. */
function ownedBy(store, kinds) {
  const owned = new Map();
  for (const kind of kinds) {
    for (const object of store.get(kind).values()) {
      const ref = controllerOf(object);
      if (ref === undefined) continue;
      if (!owned.has(ref.uid)) owned.set(ref.uid, []);
      owned.get(ref.uid).push(object);
    }
  }
  return owned;
}

function PodList({ pods, onSelect, selected }) {
  if (pods.length === 0) return html`<p class="empty">no pods</p>`;
  return html`<div class="pods">${pods.sort(byName).map((pod) => html`<${PodChip} key=${keyOf(pod)} pod=${pod} onSelect=${onSelect} selected=${selected} />`)}</div>`;
}

function Workload({ kind, object, owned, onSelect, selected, filter }) {
  const children = owned.get(object.metadata.uid) ?? [];
  const pods = children.filter((c) => c.spec?.containers !== undefined && matches(c, filter));
  const sets = children.filter((c) => c.spec?.containers === undefined).sort(byName);
  // What the workload's own status says is ready, else its ready pods.
  const status = object.status ?? {};
  const job = kind === "Job";
  const ready = job
    ? (status.succeeded ?? 0)
    : (status.readyReplicas ?? status.numberReady ?? pods.filter(isReady).length);
  const desired = job
    ? (object.spec?.completions ?? 1)
    : (object.spec?.replicas ?? status.desiredNumberScheduled);
  const word = job ? "succeeded" : "ready";
  return html`<li class="workload" data-workload="${kind}/${keyOf(object)}">
    <div class="row">
      <span class="kind">${kind}</span> <strong>${keyOf(object)}</strong>
      <span class="count">${desired === undefined ? `${ready} ${word}` : `${ready}/${desired} ${word}`}</span>
      <span class="age">${age(object.metadata.creationTimestamp)}</span>
    </div>
    ${sets.length > 0 && html`<ul>${sets.map((set) => html`<${Workload} key=${set.metadata.uid} kind="ReplicaSet" object=${set} owned=${owned} onSelect=${onSelect} selected=${selected} filter=${filter} />`)}</ul>`}
    ${pods.length > 0 && html`<${PodList} pods=${pods} onSelect=${onSelect} selected=${selected} />`}
  </li>`;
}

export function WorkloadsView({ store, filter, onSelect, selected }) {
  const owned = ownedBy(store, ["pods", "replicasets"]);
  const top = [
    ["Deployment", "deployments"],
    ["StatefulSet", "statefulsets"],
    ["DaemonSet", "daemonsets"],
    ["Job", "jobs"],
  ];
  const loose = [...store.get("replicasets").values()]
    .filter((rs) => controllerOf(rs) === undefined)
    .sort(byName);
  const bare = [...store.get("pods").values()].filter(
    (pod) => controllerOf(pod) === undefined && matches(pod, filter),
  );
  return html`<section class="workloads" aria-label="workloads">
    <ul class="tree">
      ${top.flatMap(([kind, storeKind]) =>
        [...store.get(storeKind).values()]
          .sort(byName)
          .map(
            (object) =>
              html`<${Workload} key=${object.metadata.uid} kind=${kind} object=${object} owned=${owned} onSelect=${onSelect} selected=${selected} filter=${filter} />`,
          ),
      )}
      ${loose.map((rs) => html`<${Workload} key=${rs.metadata.uid} kind="ReplicaSet" object=${rs} owned=${owned} onSelect=${onSelect} selected=${selected} filter=${filter} />`)}
      ${
        bare.length > 0 &&
        html`<li class="workload"><div class="row"><span class="kind">Pods</span> <strong>without a controller</strong></div>
          <${PodList} pods=${bare} onSelect=${onSelect} selected=${selected} /></li>`
      }
    </ul>
  </section>`;
}

export function ServicesView({ store, onSelect }) {
  const slices = [...store.get("endpointslices").values()];
  const services = [...store.get("services").values()].sort(byName);
  return html`<section class="services" aria-label="services">
    <table>
      <thead><tr><th>Service</th><th>Type</th><th>Cluster IP</th><th>Ports</th><th>Endpoints</th></tr></thead>
      <tbody>
        ${services.map((service) => {
          const key = keyOf(service);
          const endpoints = slices
            .filter(
              (s) =>
                s.metadata.namespace === service.metadata.namespace &&
                s.metadata.labels?.["kubernetes.io/service-name"] === service.metadata.name,
            )
            .flatMap((s) => s.endpoints ?? []);
          return html`<tr data-service=${key}>
            <td>${key}</td>
            <td>${service.spec?.type ?? "ClusterIP"}</td>
            <td>${service.spec?.clusterIP ?? "-"}</td>
            <td>${(service.spec?.ports ?? []).map((p) => `${p.port}/${p.protocol ?? "TCP"}`).join(", ")}</td>
            <td class="endpoints">
              ${endpoints.length === 0 ? html`<span class="empty">none</span>` : ""}
              ${endpoints.map((e) => {
                const ready = e.conditions?.ready !== false;
                const pod =
                  e.targetRef?.kind === "Pod" ? `${e.targetRef.namespace}/${e.targetRef.name}` : undefined;
                return html`<button class="endpoint ${ready ? "ok" : "pending"}" disabled=${pod === undefined} onClick=${() => pod && onSelect(pod)}>
                  ${e.addresses?.join(",")}${ready ? "" : " (not ready)"}
                </button>`;
              })}
            </td>
          </tr>`;
        })}
      </tbody>
    </table>
  </section>`;
}
