import type { MachinerySnapshot } from "@reconcile/controller";

/** A component in this process that can say what it holds: a runtime `Manager` (`machinery()`), an `Introspection`. */
export interface MachineryProvider {
  /** The component's name in the view: `kube-controller-manager`, `kube-scheduler`, `kubelet`, … */
  readonly component: string;
  snapshot(): readonly MachinerySnapshot[];
}

/** What `/machinery` answers: every source of every component, and the components that could not be asked. */
export interface MachineryView {
  /** When the view was gathered, in ms since the epoch. */
  at: number;
  sources: (MachinerySnapshot & { component: string })[];
  errors: { component: string; message: string }[];
}

/** How long a component in another process may take to answer. */
const remoteTimeoutMs = 2_000;

/** Asks every provider and every remote `/debug/machinery` at once; a failure is listed, not thrown. */
export async function gatherMachinery(
  providers: readonly MachineryProvider[],
  urls: readonly string[],
  now: () => number = Date.now,
): Promise<MachineryView> {
  const view: MachineryView = { at: now(), sources: [], errors: [] };
  for (const provider of providers) {
    try {
      for (const source of provider.snapshot())
        view.sources.push({ component: provider.component, ...source });
    } catch (error) {
      view.errors.push({ component: provider.component, message: messageOf(error) });
    }
  }
  const answers = await Promise.all(urls.map((url) => askRemote(url)));
  for (const answer of answers) {
    if ("message" in answer) view.errors.push(answer);
    else view.sources.push(...answer.sources);
  }
  return view;
}

async function askRemote(
  base: string,
): Promise<{ sources: MachineryView["sources"] } | { component: string; message: string }> {
  const url = `${base.replace(/\/$/, "")}/debug/machinery`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(remoteTimeoutMs) });
    if (!response.ok) return { component: base, message: `${url} answered ${response.status}` };
    const body = (await response.json()) as { component?: unknown; sources?: unknown };
    if (!Array.isArray(body.sources)) return { component: base, message: `${url} answered no sources` };
    const component = typeof body.component === "string" ? body.component : base;
    return { sources: (body.sources as MachinerySnapshot[]).map((source) => ({ component, ...source })) };
  } catch (error) {
    return { component: base, message: `${url}: ${messageOf(error)}` };
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The components' Prometheus text, concatenated: each in-process source, then
 * each remote `<url>/metrics`. A source that fails is left out, with a
 * comment line saying why.
 */
export async function gatherMetrics(
  sources: readonly (() => string | Promise<string>)[],
  urls: readonly string[],
): Promise<string> {
  const parts = await Promise.all([
    ...sources.map(async (source) => {
      try {
        return await source();
      } catch (error) {
        return `# metrics source failed: ${messageOf(error)}\n`;
      }
    }),
    ...urls.map(async (base) => {
      const url = `${base.replace(/\/$/, "")}/metrics`;
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(remoteTimeoutMs) });
        return response.ok ? await response.text() : `# ${url} answered ${response.status}\n`;
      } catch (error) {
        return `# ${url}: ${messageOf(error)}\n`;
      }
    }),
  ]);
  return parts.map((part) => (part.endsWith("\n") ? part : `${part}\n`)).join("");
}
