// ImageLocality, after upstream's image_locality_test.go (TestImageLocalityPriority).
import type { Node, Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { imageLocality, normalizedImageName } from "./image-locality.js";
import { nodeInfoOf, runScore } from "./testing.js";

const mb = 1024 * 1024;

function imageNode(name: string, images: [string, number][]): Node {
  return {
    metadata: { name },
    status: {
      allocatable: { pods: "110" },
      images: images.map(([image, size]) => ({ names: [image], sizeBytes: size * mb })),
    },
  };
}

const podWith = (...images: string[]): Pod => ({
  metadata: { name: "p", namespace: "default" },
  spec: { containers: images.map((image, i) => ({ name: `c${i}`, image })) },
});

const nodes = () => [
  nodeInfoOf(
    imageNode("node1", [
      ["gcr.io/40:latest", 40],
      ["gcr.io/300:latest", 300],
      ["gcr.io/3000:latest", 3000],
    ]),
  ),
  nodeInfoOf(
    imageNode("node2", [
      ["gcr.io/250:latest", 250],
      ["gcr.io/10:latest", 10],
      ["gcr.io/3000:latest", 3000],
    ]),
  ),
];

describe("ImageLocality Score", () => {
  it("two images each on one of two nodes: the larger one wins", () => {
    // node1: 40 MiB · 1/2 = 20 MiB, under 23 MiB → 0; node2: 250 · 1/2 = 125 → 100·(125 − 23)/(2000 − 23) = 5
    expect(runScore(imageLocality, podWith("gcr.io/40", "gcr.io/250"), nodes())).toEqual({
      node1: 0,
      node2: 5,
    });
  });

  it("one container: the threshold is 1000 MiB", () => {
    // node1: 300 · 1/2 = 150 → 100·(150 − 23)/(1000 − 23) = 12
    expect(runScore(imageLocality, podWith("gcr.io/300:latest"), nodes())).toEqual({ node1: 12, node2: 0 });
  });

  it("an image on every node scores its full size there, capped at the threshold", () => {
    expect(runScore(imageLocality, podWith("gcr.io/3000"), nodes())).toEqual({ node1: 100, node2: 100 });
  });

  it("is skipped when no node holds any of the pod's images", () => {
    expect(runScore(imageLocality, podWith("nginx"), nodes())).toBe("skip");
  });

  it("normalizes names without a tag to :latest, also behind a registry port", () => {
    expect(normalizedImageName("nginx")).toBe("nginx:latest");
    expect(normalizedImageName("nginx:1.27")).toBe("nginx:1.27");
    expect(normalizedImageName("registry:5000/team/app")).toBe("registry:5000/team/app:latest");
    expect(normalizedImageName("registry:5000/team/app:v2")).toBe("registry:5000/team/app:v2");
  });
});
