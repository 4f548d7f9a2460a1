import type { DeepReadonly, Pod } from "@reconcile/api";
import { maxNodeScore, nodeListsOf, type Plugin, skipStatus, successStatus } from "../framework.js";

const mb = 1024 * 1024;
/** Below this sum a node scores 0 (upstream `minThreshold`). */
const minThreshold = 23 * mb;
/** Per container, the sum at which a node scores 100 (upstream `maxContainerThreshold`). */
const maxContainerThreshold = 1000 * mb;

const preScoreKey = "PreScoreImageLocality";

/** The name a CRI runtime reports for an image: `:latest` added when no tag is given (upstream `normalizedImageName`). */
export function normalizedImageName(name: string): string {
  return name.lastIndexOf(":") <= name.lastIndexOf("/") ? `${name}:latest` : name;
}

/** Per normalized image the pod uses: on how many of all nodes it is present. */
type Spread = Map<string, number>;

/** The pod's images (normalized, one per container) and their spread, found once per cycle. */
interface PreScoreState {
  images: string[];
  spread: Spread;
  totalNodes: number;
}

function podImages(pod: DeepReadonly<Pod>): string[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) =>
    normalizedImageName(c.image ?? ""),
  );
}

/**
 * ImageLocality (upstream `plugins/imagelocality`): nodes that already hold
 * the pod's images score higher. Each image present on the node adds its size
 * scaled by the share of all nodes holding it (so an image on every node
 * favours none); the sum is clamped to [23 MiB, 1000 MiB × containers] and
 * scaled to [0, 100].
 */
export const imageLocality: Plugin = {
  name: "ImageLocality",
  weight: 1,
  preScore(state, pod, _feasible, allNodes) {
    const lists = nodeListsOf(state, allNodes);
    const images = podImages(pod);
    const spread: Spread = new Map();
    let present = false;
    for (const image of images) {
      const count = lists.imageNodeCount(image);
      spread.set(image, count);
      if (count > 0) present = true;
    }
    // No node holds any of the images: every node would score 0.
    if (!present) return skipStatus;
    state.set(preScoreKey, { images, spread, totalNodes: allNodes.length } satisfies PreScoreState);
    return successStatus;
  },
  score(state, _pod, nodeInfo) {
    const { images, spread, totalNodes } = state.get(preScoreKey) as PreScoreState;
    const maxThreshold = maxContainerThreshold * images.length;
    if (maxThreshold <= minThreshold) return 0;
    let sum = 0;
    for (const image of images) {
      const size = nodeInfo.imageSizes.get(image);
      if (size !== undefined) sum += Math.trunc(size * ((spread.get(image) ?? 0) / totalNodes));
    }
    const clamped = Math.min(Math.max(sum, minThreshold), maxThreshold);
    return Math.trunc((maxNodeScore * (clamped - minThreshold)) / (maxThreshold - minThreshold));
  },
};
