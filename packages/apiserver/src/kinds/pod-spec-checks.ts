import { parseQuantity } from "@reconcile/api";
import type { Container, Volume } from "kubernetes-types/core/v1.js";
import type { FieldErrors } from "../registry/field-errors.js";

// Parts of upstream's `ValidatePodSpec` (pkg/apis/core/validation) that
// users meet with a typo: a volume with two sources, a mount of
// a volume the pod does not have, an environment variable name with `=`, and
// requests above limits.

/** Volume sources in the order upstream's `validateVolumeSource` checks them. */
const volumeSources = [
  "hostPath",
  "emptyDir",
  "gitRepo",
  "gcePersistentDisk",
  "awsElasticBlockStore",
  "secret",
  "nfs",
  "iscsi",
  "glusterfs",
  "flexVolume",
  "persistentVolumeClaim",
  "rbd",
  "cinder",
  "cephfs",
  "quobyte",
  "downwardAPI",
  "fc",
  "flocker",
  "configMap",
  "azureFile",
  "vsphereVolume",
  "photonPersistentDisk",
  "portworxVolume",
  "azureDisk",
  "storageos",
  "projected",
  "scaleIO",
  "csi",
  "ephemeral",
  "image",
] as const;

/**
 * Each volume names one source (upstream `validateVolumeSource`). A volume
 * that names none never gets here: defaulting made it an `emptyDir`.
 */
export function validateVolumeSources(volumes: readonly Volume[], path: string, errors: FieldErrors): void {
  volumes.forEach((volume, i) => {
    const present = volumeSources.filter(
      (source) => (volume as unknown as Record<string, unknown>)[source] != null,
    );
    for (const extra of present.slice(1))
      errors.forbidden(`${path}[${i}].${extra}`, "may not specify more than 1 volume type");
  });
}

/** Upstream `IsRelaxedEnvVarName` (RelaxedEnvironmentVariableValidation, on by default in v1.32). */
function envNameProblems(name: string): string[] {
  if (name === "") return ["environment variable name must be non-empty"];
  return /^[ -<>-~]+$/.test(name)
    ? []
    : ["a valid environment variable name must consist only of printable ASCII characters other than '='"];
}

/** Resources whose request may be below the limit (upstream `IsOvercommitAllowed`): native ones but hugepages. */
function overcommitAllowed(name: string): boolean {
  const native = !name.includes("/") || name.startsWith("kubernetes.io/");
  return native && !name.startsWith("hugepages-");
}

/**
 * A container's environment, mounts and resources, after its ports (upstream
 * `validateContainerCommon`): names of variables, mounts of the pod's own
 * volumes at distinct paths, and requests no greater than limits (equal for
 * extended resources and hugepages).
 */
export function validateContainerCommon(
  container: Container,
  at: string,
  volumes: ReadonlySet<string>,
  errors: FieldErrors,
): void {
  (container.env ?? []).forEach((env, j) => {
    if (!env.name) errors.required(`${at}.env[${j}].name`);
    for (const problem of envNameProblems(env.name ?? ""))
      errors.invalid(`${at}.env[${j}].name`, env.name ?? "", problem);
  });
  const mountPaths = new Set<string>();
  (container.volumeMounts ?? []).forEach((mount, j) => {
    const mountAt = `${at}.volumeMounts[${j}]`;
    if (!mount.name) errors.required(`${mountAt}.name`);
    if (!volumes.has(mount.name)) errors.notFound(`${mountAt}.name`, mount.name);
    if (!mount.mountPath) errors.required(`${mountAt}.mountPath`);
    if (mountPaths.has(mount.mountPath))
      errors.invalid(`${mountAt}.mountPath`, mount.mountPath, "must be unique");
    mountPaths.add(mount.mountPath);
  });
  const requests = container.resources?.requests ?? {};
  const limits = container.resources?.limits ?? {};
  for (const name in requests) {
    const request = requests[name]!;
    const limit = limits[name];
    if (limit === undefined) continue;
    let requested: ReturnType<typeof parseQuantity>;
    let limited: ReturnType<typeof parseQuantity>;
    try {
      requested = parseQuantity(request);
      limited = parseQuantity(limit);
    } catch {
      continue; // a malformed quantity is refused where quantities are read
    }
    const order = requested.cmp(limited);
    if (order !== 0 && !overcommitAllowed(name))
      errors.invalid(
        `${at}.resources.requests`,
        requested.toString(),
        `must be equal to ${name} limit of ${limited.toString()}`,
      );
    else if (order > 0)
      errors.invalid(
        `${at}.resources.requests`,
        requested.toString(),
        `must be less than or equal to ${name} limit of ${limited.toString()}`,
      );
  }
}
