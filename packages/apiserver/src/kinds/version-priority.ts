/**
 * Kubernetes' order of API versions (apimachinery's
 * `CompareKubeAwareVersionStrings`): GA before beta before alpha, then the
 * higher major, then the higher minor (`v2` > `v1` > `v2beta1` > `v1beta2` >
 * `v1alpha1`); versions not of the form `v<N>[alpha|beta<N>]` come after every
 * one that is, in reverse string order. Positive when `a` has the higher
 * priority.
 */
export function compareKubeAwareVersions(a: string, b: string): number {
  if (a === b) return 0;
  const pa = parse(a);
  const pb = parse(b);
  if (pa === undefined && pb === undefined) return b < a ? -1 : b > a ? 1 : 0;
  if (pa === undefined) return -1;
  if (pb === undefined) return 1;
  if (pa.stability !== pb.stability) return pa.stability - pb.stability;
  if (pa.major !== pb.major) return pa.major - pb.major;
  return pa.minor - pb.minor;
}

/** Versions sorted by priority, highest first (how discovery lists a group's versions). */
export function byVersionPriority(versions: readonly string[]): string[] {
  return [...versions].sort((a, b) => compareKubeAwareVersions(b, a));
}

const stabilities = { alpha: 0, beta: 1 } as const;

function parse(version: string): { major: number; stability: number; minor: number } | undefined {
  const match = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(version);
  if (match === null) return undefined;
  return {
    major: Number(match[1]),
    stability: match[2] === undefined ? 2 : stabilities[match[2] as "alpha" | "beta"],
    minor: match[3] === undefined ? 0 : Number(match[3]),
  };
}
